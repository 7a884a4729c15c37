package dev.ordersaga.events;

/** Step 3 failed for good: the provider declined (a timeout alone never produces this event). */
public record PaymentFailed(String paymentId, String reason) implements PaymentEvent {
}
