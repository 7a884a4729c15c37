package dev.ordersaga.payment.rest;

import dev.ordersaga.payment.domain.Payment;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.UUID;

/**
 * A payment and its provider schedule, for operators: never the customer's token. {@code attempts} counts the calls
 * of the current phase that failed (a refund's, while REFUNDING); {@code refundRefused}, whether the provider's last
 * answer to the refund was a refusal rather than none.
 */
public record PaymentView(UUID paymentId, UUID orderId, String status, BigDecimal amount, String currency,
                          boolean cancelRequested, boolean held, int attempts, Instant nextAttemptAt,
                          String providerChargeId, String providerRefundId, String declineReason,
                          boolean refundRefused, String refundConfirmedBy, String refundConfirmation,
                          Instant updatedAt) {

    static PaymentView of(Payment payment) {
        return new PaymentView(payment.id(), payment.orderId(), payment.status().name(), payment.amount(),
                payment.currency(), payment.cancelRequested(), payment.isHeld(), payment.attempts(),
                payment.nextAttemptAt(), payment.providerChargeId(), payment.providerRefundId(),
                payment.declineReason(), payment.refundRefused(), payment.refundConfirmedBy(),
                payment.refundConfirmation(), payment.updatedAt());
    }
}
