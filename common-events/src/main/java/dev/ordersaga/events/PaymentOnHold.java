package dev.ordersaga.events;

/**
 * The charge cannot be settled by the service on its own: the provider has no charge under the payment's key, but the
 * key is old enough that the provider may have forgotten it, so a charge sent now could be a second one. The order
 * waits for an operator; nothing is charged or refunded meanwhile.
 */
public record PaymentOnHold(String paymentId, String reason, int attempts) implements PaymentEvent {
}
