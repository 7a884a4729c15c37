package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.persistence.PaymentRepository;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.payment.provider.PaymentProviderClient.RefundOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Refunded;
import dev.ordersaga.retry.Backoff;
import dev.ordersaga.work.Surpluses;
import dev.ordersaga.work.Surpluses.Surplus;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Refunds the second charges the provider made under payments' keys ({@link SettlementReconciliation} finds them in
 * its settlement report; {@link Surpluses} has the rule), each in full, under {@code refund-surplus-<charge id>}.
 */
@ApplicationScoped
@Startup // its counters exist from the start, at zero, for the alert rules
public class SurplusRefunds {

    private static final Logger LOG = Logger.getLogger(SurplusRefunds.class);

    @Inject
    TransactionalWrites writes;

    @Inject
    PaymentRepository payments;

    @Inject
    PaymentProviderClient provider;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "payment.worker.lease", defaultValue = "30s")
    Duration lease;

    @ConfigProperty(name = "payment.retry.base-delay", defaultValue = "200ms")
    Duration retryBaseDelay;

    @ConfigProperty(name = "payment.retry.max-delay", defaultValue = "10s")
    Duration retryMaxDelay;

    private Surpluses surpluses;

    @PostConstruct
    void start() {
        surpluses = new Surpluses("surplus_charge", "surplus-refund", "refund of surplus charge", writes, this::refund,
                lease, new Backoff(retryBaseDelay, retryMaxDelay), meters, "saga.payment.surplus.refunds");
    }

    void onShutdown(@Observes ShutdownEvent event) {
        surpluses.stop();
    }

    /** @return whether the charge was news */
    boolean found(PaymentRepository.ChargeState payment, String chargeId) {
        return surpluses.found(payment.paymentId(), payment.orderId(), payment.correlationId(), chargeId);
    }

    @Scheduled(every = "${payment.surplus.sweep-interval:10s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        surpluses.sweep(20);
    }

    /** A charge under the payment's key was sent with the payment's amount and currency: those are refunded. */
    private Surpluses.Outcome refund(Surplus charge) {
        PaymentRepository.ChargeState payment = payments.chargeState(charge.ownerId())
                .orElseThrow(() -> new IllegalStateException("payment " + charge.ownerId() + " is gone"));
        String key = refundIdempotencyKey(charge.providerRef());
        // as the charge was sent (the column keeps four decimals): a provider may refuse 10.0000 EUR
        BigDecimal amount = Payment.money(payment.amount(), payment.currency());
        LOG.infof("Refunding %s %s of surplus charge %s for order %s (idempotency key %s)", amount,
                payment.currency(), charge.providerRef(), charge.orderId(), key);
        RefundOutcome outcome = provider.refund(key, charge.providerRef(), amount, payment.currency(),
                charge.orderId().toString());
        if (outcome instanceof Refunded refunded) {
            return new Surpluses.Undone(refunded.refundId());
        }
        PaymentProviderClient.RefundFailed failed = (PaymentProviderClient.RefundFailed) outcome;
        return new Surpluses.Failed(failed.reason(), failed.refused());
    }

    /** The second charges found of an order, oldest first, with their refunds' state. */
    public List<Surpluses.Recorded> ofOrder(UUID orderId) {
        return surpluses.ofOrder(orderId);
    }

    /**
     * Records a second charge's refund, which the provider keeps refusing, as made outside its API on an operator's
     * word ({@link Surpluses#confirmUndoneByHand}).
     *
     * @param refundId the provider's id of the refund the operator made, null where the money went back another way
     */
    public Optional<Surpluses.Recorded> confirmRefundedByHand(UUID orderId, String chargeId, String refundId,
                                                              String operator, String reason) {
        return surpluses.confirmUndoneByHand(orderId, chargeId, refundId, operator, reason);
    }

    /** Not the payment's own refund key ({@code refund-<payment id>}): this refunds another charge. */
    static String refundIdempotencyKey(String chargeId) {
        return "refund-surplus-" + chargeId;
    }
}
