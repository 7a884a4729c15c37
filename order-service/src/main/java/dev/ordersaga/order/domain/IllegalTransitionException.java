package dev.ordersaga.order.domain;

import dev.ordersaga.eventing.NotRetryable;

/** A transition the order state machine does not have. Never swallowed into a silent update. */
public class IllegalTransitionException extends RuntimeException implements NotRetryable {

    private final OrderStatus from;
    private final String transition;

    public IllegalTransitionException(OrderStatus from, String transition) {
        super("order in " + from + " cannot " + transition);
        this.from = from;
        this.transition = transition;
    }

    public OrderStatus from() {
        return from;
    }

    public String transition() {
        return transition;
    }
}
