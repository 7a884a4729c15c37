package dev.ordersaga.inventory.domain;

import dev.ordersaga.eventing.NotRetryable;

/** A transition the reservation state machine does not have. Never swallowed into a silent update. */
public class IllegalTransitionException extends RuntimeException implements NotRetryable {

    private final ReservationStatus from;
    private final String transition;

    public IllegalTransitionException(ReservationStatus from, String transition) {
        super("reservation in " + from + " cannot " + transition);
        this.from = from;
        this.transition = transition;
    }

    public ReservationStatus from() {
        return from;
    }

    public String transition() {
        return transition;
    }
}
