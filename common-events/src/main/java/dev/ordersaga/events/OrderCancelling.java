package dev.ordersaga.events;

/** The order entered COMPENSATING: every participant undoes its own step, if it took it. */
public record OrderCancelling(String reason, String requestedBy) implements OrderEvent {
}
