package dev.ordersaga.events;

import java.math.BigDecimal;

/**
 * Step 3: the provider charged the customer.
 *
 * @param refundFollows the payment is refunded at once, in the transaction that wrote this event: the charge settled
 *                      after the payment was declined or abandoned, or while the order was being cancelled. Nothing
 *                      is to be shipped for it. The event still tells, since the money moved. Events written before
 *                      the field existed have none (null: no refund follows).
 */
public record PaymentSucceeded(String paymentId, BigDecimal amount, String currency, String providerChargeId,
                               Boolean refundFollows) implements PaymentEvent {

    /** A charge that stands: the saga goes on to shipping. */
    public PaymentSucceeded(String paymentId, BigDecimal amount, String currency, String providerChargeId) {
        this(paymentId, amount, currency, providerChargeId, false);
    }

    /** The money comes back at once: the order is being cancelled, and nothing is shipped for this charge. */
    public boolean refundedAtOnce() {
        return Boolean.TRUE.equals(refundFollows);
    }
}
