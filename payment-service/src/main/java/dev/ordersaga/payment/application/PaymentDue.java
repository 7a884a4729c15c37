package dev.ordersaga.payment.application;

import java.time.Instant;
import java.util.UUID;

/** A payment owes the provider a call at {@code at}; observed after the transaction that scheduled it committed. */
public record PaymentDue(UUID paymentId, Instant at) {
}
