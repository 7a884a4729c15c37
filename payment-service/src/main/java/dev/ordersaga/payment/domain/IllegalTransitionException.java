package dev.ordersaga.payment.domain;

import dev.ordersaga.eventing.NotRetryable;

/** A transition the payment state machine does not have. Never swallowed into a silent update. */
public class IllegalTransitionException extends RuntimeException implements NotRetryable {

    private final PaymentStatus from;
    private final String transition;

    public IllegalTransitionException(PaymentStatus from, String transition) {
        super("payment in " + from + " cannot " + transition);
        this.from = from;
        this.transition = transition;
    }

    public PaymentStatus from() {
        return from;
    }

    public String transition() {
        return transition;
    }
}
