package dev.ordersaga.events;

/**
 * An operator found no charge at the provider for an order whose payment was held (PaymentOnHold) and asked payment to
 * charge it again: under the same key, which the provider no longer knows.
 */
public record PaymentRetryRequested(String requestedBy) implements OrderEvent {
}
