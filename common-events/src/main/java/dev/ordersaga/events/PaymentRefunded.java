package dev.ordersaga.events;

import java.math.BigDecimal;

/**
 * Compensation of step 3: the charge was refunded, or there was nothing to refund (amount zero,
 * providerRefundId null).
 *
 * @param providerRefundId the provider's id of the refund; null where nothing was refunded, or where an operator
 *                         settled the refund outside the provider ({@code confirmedBy})
 * @param confirmedBy      null when the provider's API refunded it; else the operator who confirmed it by hand,
 *                         having settled a refund the API kept refusing: the order is cancelled on their word, so
 *                         order-service logs it among the order's operator actions
 * @param confirmation     with {@code confirmedBy}: what the operator gave as the reason the money is back
 */
public record PaymentRefunded(String paymentId, BigDecimal amount, String currency, String providerRefundId,
                              String confirmedBy, String confirmation) implements PaymentEvent {

    public PaymentRefunded(String paymentId, BigDecimal amount, String currency, String providerRefundId) {
        this(paymentId, amount, currency, providerRefundId, null, null);
    }
}
