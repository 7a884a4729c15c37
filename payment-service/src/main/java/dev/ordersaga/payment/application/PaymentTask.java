package dev.ordersaga.payment.application;

import dev.ordersaga.payment.domain.Payment;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.UUID;

/**
 * What a worker needs to make one provider call for a claimed payment, read in the claiming transaction so that
 * the call itself runs with no transaction and no managed entity. {@code cancelRequested} is as the claim read it:
 * an OrderCancelling may commit between the claim and the call. {@code chargingSince} tells whether the provider's
 * "no charge under this key" may be taken at its word ({@link dev.ordersaga.payment.domain.RechargeWindow}).
 * {@code claimedUntil} is the claim's lease, which tells whether the claim still holds the row when its outcome is
 * recorded ({@link Payment#isClaimedUntil}).
 */
public record PaymentTask(UUID paymentId, UUID orderId, Payment.ProviderCall call, BigDecimal amount, String currency,
                          String paymentToken, String chargeId, String chargeIdempotencyKey,
                          String refundIdempotencyKey, String correlationId, UUID causedByEventId,
                          boolean cancelRequested, Instant chargingSince, Instant claimedUntil) {

    /** The call of the claim the transaction that made the payment due took. */
    static PaymentTask of(Payment payment, Instant claimedUntil) {
        return of(payment, payment.nextCall(), claimedUntil);
    }

    /** The call of a claim taken later, by the sweep or when a backoff ended ({@link Payment#nextCallAfterAnotherClaim}). */
    static PaymentTask ofLaterClaim(Payment payment, Instant claimedUntil) {
        return of(payment, payment.nextCallAfterAnotherClaim(), claimedUntil);
    }

    private static PaymentTask of(Payment payment, Payment.ProviderCall call, Instant claimedUntil) {
        return new PaymentTask(payment.id(), payment.orderId(), call, payment.amount(), payment.currency(),
                payment.paymentToken(), payment.providerChargeId(), payment.idempotencyKey(),
                payment.refundIdempotencyKey(), payment.correlationId(), payment.causedByEventId(),
                payment.cancelRequested(), payment.chargingSince(), claimedUntil);
    }
}
