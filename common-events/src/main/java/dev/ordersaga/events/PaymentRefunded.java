package dev.ordersaga.events;

import java.math.BigDecimal;

/**
 * Compensation of step 3: the charge was refunded, or there was nothing to refund (amount zero,
 * providerRefundId null).
 */
public record PaymentRefunded(String paymentId, BigDecimal amount, String currency, String providerRefundId)
        implements PaymentEvent {
}
