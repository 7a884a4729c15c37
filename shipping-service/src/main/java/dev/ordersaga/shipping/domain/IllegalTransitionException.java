package dev.ordersaga.shipping.domain;

import dev.ordersaga.eventing.NotRetryable;

/** A transition the shipment state machine does not have. Never swallowed into a silent update. */
public class IllegalTransitionException extends RuntimeException implements NotRetryable {

    private final ShipmentStatus from;
    private final String transition;

    public IllegalTransitionException(ShipmentStatus from, String transition) {
        super("shipment in " + from + " cannot " + transition);
        this.from = from;
        this.transition = transition;
    }

    public ShipmentStatus from() {
        return from;
    }

    public String transition() {
        return transition;
    }
}
