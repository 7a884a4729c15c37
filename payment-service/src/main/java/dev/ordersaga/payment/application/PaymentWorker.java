package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import dev.ordersaga.payment.domain.RechargeWindow;
import dev.ordersaga.payment.persistence.PaymentRepository.ChargeState;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.payment.provider.PaymentProviderClient.ChargeOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Charged;
import dev.ordersaga.payment.provider.PaymentProviderClient.Declined;
import dev.ordersaga.payment.provider.PaymentProviderClient.NotFound;
import dev.ordersaga.payment.provider.PaymentProviderClient.RefundOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Refunded;
import dev.ordersaga.payment.provider.PaymentProviderClient.Unresolved;
import dev.ordersaga.work.ProviderCalls;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Makes the provider calls that payments owe — charge, charge status, refund, a declined charge's status — outside
 * any transaction, on the shared {@link ProviderCalls} runtime: the call is claimed (by the transaction that made it
 * due, or later by a {@code FOR UPDATE SKIP LOCKED} claim with a lease on {@code next_attempt_at}), made with the
 * payment's idempotency key in the saga's correlation scope, and its outcome recorded in a new transaction through
 * the state machine (which publishes via the outbox).
 */
@ApplicationScoped
// its counters exist from the start, at zero, for the alert rules; and it is made before the scheduler starts
// (priority 0), so that a lease its calls can outlast stops the service before any sweep has run
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
public class PaymentWorker {

    private static final Logger LOG = Logger.getLogger(PaymentWorker.class);

    @Inject
    PaymentService payments;

    @Inject
    PaymentProviderClient provider;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "payment.worker.threads", defaultValue = "4")
    int threads;

    @ConfigProperty(name = "payment.worker.batch-size", defaultValue = "20")
    int batchSize;

    @ConfigProperty(name = "payment.worker.lease", defaultValue = "30s")
    Duration lease;

    /** See {@link RechargeWindow}: well inside the provider's retention of idempotency keys (Stripe's is 24 hours). */
    @ConfigProperty(name = "payment.charge.recharge-window", defaultValue = "PT12H")
    Duration rechargeWindowLength;

    private ProviderCalls<PaymentTask> calls;
    private Counter refundFailures;
    private Counter chargeStatusFailures;
    private Counter chargesHeld;
    private Counter chargesUnrecorded;
    private RechargeWindow rechargeWindow;

    @PostConstruct
    void start() {
        // the longest call: a status query that finds no charge, then the charge under the same key
        ProviderCalls.requireLeaseOutlasts("payment.worker.lease", lease, provider.longestExchange().multipliedBy(2),
                "a status query and a charge, each up to 3 x payment.provider.timeout");
        calls = new ProviderCalls<>("payment-worker", threads, payments::claim, payments::claimDue, this::work, lease);
        refundFailures = compensationFailures("refund");
        chargeStatusFailures = compensationFailures("charge-status");
        chargesHeld = Counter.builder("saga.payment.charges.held")
                .description("Charges held for an operator: the provider had no charge under a key it may have forgotten")
                .register(meters);
        chargesUnrecorded = Counter.builder("saga.provider.outcomes.unrecorded")
                .description("Charges and parcels the provider made that the service could not record")
                .tag("outcome", "charge")
                .register(meters);
        rechargeWindow = new RechargeWindow(rechargeWindowLength);
    }

    private Counter compensationFailures(String step) {
        return Counter.builder("saga.compensation.failures")
                .description("Compensations that failed and will be retried")
                .tag("step", step)
                .register(meters);
    }

    /** Before the datasource and Hibernate go: no new calls; claimed payments are retried when their lease ends. */
    void onShutdown(@Observes ShutdownEvent event) {
        calls.stop();
    }

    /** Wakes the worker for a payment once the transaction that scheduled it has committed. */
    void onDue(@Observes(during = TransactionPhase.AFTER_SUCCESS) PaymentDue due) {
        calls.due(due.paymentId(), due.at(), due.claimed());
    }

    /** Crash recovery and backstop: every payment whose next attempt is due, claimed in batches. */
    @Scheduled(every = "${payment.worker.sweep-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        calls.sweep(batchSize);
    }

    void work(PaymentTask task) {
        try (Correlation.Scope ignored = Correlation.open(task.correlationId(), task.causedByEventId())) {
            switch (task.call()) {
                case CHARGE -> charge(task);
                case CHARGE_STATUS -> askForChargeStatus(task, task.cancelRequested());
                case REFUND -> refund(task);
                case SETTLEMENT_STATUS -> lookForLateSettlement(task);
                case NONE -> LOG.debugf("Payment %s of order %s owes the provider nothing", task.paymentId(), task.orderId());
            }
        } catch (RuntimeException e) {
            if (task.call() == Payment.ProviderCall.REFUND) {
                // a compensation that keeps failing alerts whatever the cause: the refund's own refusals above do, and
                // so must an error of ours (its outcome not recorded, the database away)
                refundFailures.increment();
                LOG.errorf(e, "ALERT compensation failed: refund of order %s failed unexpectedly; retried under the same "
                        + "key when its lease ends", task.orderId());
                return;
            }
            if (task.call() == Payment.ProviderCall.CHARGE_STATUS && task.cancelRequested()) {
                cancellingChargeStatusFailed(task, e);
                return;
            }
            LOG.errorf(e, "Provider call for payment %s of order %s failed unexpectedly; retried when its lease ends",
                    task.paymentId(), task.orderId());
        }
    }

    /**
     * The first charge call, unless the order is cancelling by now. The task cannot tell: it was read when the call was
     * claimed, often in the very transaction that made it due, and an OrderCancelling may have committed since (in the
     * same poll even, or while the task waited for a thread). So the committed row is read once more right before the
     * call. A cancellation that commits after this read meets a call under way and is answered once it resolved.
     *
     * <p>Cancelling, the provider is asked instead of charged, although this first call's claim is the payment's first
     * since charging began: a payment an operator sent back after a hold was charged under the same key before, and a
     * straggler of those calls may still land.
     *
     * <p>A claim of the first charge taken later (its lease ran out: the worker died in its call, or before it) is no
     * charge but a status query ({@link Payment#nextCallAfterAnotherClaim}).
     */
    private void charge(PaymentTask task) {
        Optional<ChargeState> committed = payments.committedCharge(task.paymentId());
        if (decided(task, committed)) {
            return;
        }
        if (committed.map(ChargeState::cancelRequested).orElse(false)) {
            LOG.infof("Order %s is cancelling: no charge is sent; asking the provider whether an earlier call charged "
                    + "(idempotency key %s)", task.orderId(), task.chargeIdempotencyKey());
            try {
                askForChargeStatus(task, true);
            } catch (RuntimeException e) {
                // the task was claimed as a charge, so work() would not tell this from a charge's failure
                cancellingChargeStatusFailed(task, e);
            }
            return;
        }
        send(task, false);
    }

    /**
     * The charge's outcome was recorded while the call waited: the provider's webhook or its report told of the charge
     * of an earlier call under the key (an operator sent a held payment back meanwhile), or another worker decided.
     * A charge sent now could be a second one, if the provider forgot the key.
     */
    private static boolean decided(PaymentTask task, Optional<ChargeState> committed) {
        if (committed.isPresent() && committed.get().status() != PaymentStatus.CHARGING) {
            LOG.infof("Payment %s of order %s is %s by now: no charge is sent", task.paymentId(), task.orderId(),
                    committed.get().status());
            return true;
        }
        return false;
    }

    /** @param again an earlier call under the key went unanswered, and the provider had no charge under it since */
    private void send(PaymentTask task, boolean again) {
        LOG.infof("Charging %s %s for order %s (idempotency key %s)", task.amount(), task.currency(), task.orderId(),
                task.chargeIdempotencyKey());
        ChargeOutcome outcome = provider.charge(task.chargeIdempotencyKey(), task.amount(), task.currency(),
                task.paymentToken(), task.orderId().toString());
        if (again && outcome instanceof Declined declined && declined.requestRefused()) {
            // refused may be this request only (the earlier call, landing late, spent a single-use token): a timeout
            // is no decline, so the provider's status decides, asked after a backoff as for any unanswered call
            int attempt = payments.recordChargeRefusedAgain(task.paymentId(), task.claimedUntil(), declined.reason());
            if (attempt > 0) {
                LOG.warnf("Charge of order %s sent again after a call that went unanswered, and refused (%s), attempt "
                        + "%d: the provider's status decides, asked after a backoff", task.orderId(), declined.reason(),
                        attempt);
            }
            return;
        }
        record(task, outcome, false);
    }

    /** A compensation that keeps failing alerts whatever the cause, as a refund's does in {@link #work}. */
    private void cancellingChargeStatusFailed(PaymentTask task, RuntimeException e) {
        chargeStatusFailures.increment();
        LOG.errorf(e, "ALERT compensation failed: charge status of order %s failed unexpectedly; asked again when its "
                + "lease ends", task.orderId());
    }

    /** @param cancelling the order is known to be cancelling: whatever the provider says, no charge is sent */
    private void askForChargeStatus(PaymentTask task, boolean cancelling) {
        ChargeOutcome outcome = provider.chargeStatus(task.chargeIdempotencyKey());
        if (outcome instanceof NotFound) {
            // read again: the order may have been cancelled, or the charge recorded, while the provider was asked
            Optional<ChargeState> committed = payments.committedCharge(task.paymentId());
            if (decided(task, committed)) {
                return;
            }
            if (cancelling || committed.map(ChargeState::cancelRequested).orElse(false)) {
                // Nothing is charged for a cancelled order. NotFound does not prove that no charge will ever land: a
                // call of ours that timed out may still be on its way to the provider. Such a straggler finds the
                // payment CANCELLED and takes the late-settlement path (reported and refunded at once), told by the
                // provider's webhook or, that being lost, by the watch's looks; with the same key, it is the only
                // charge there can be.
                payments.recordChargeAbandoned(task.paymentId());
                return;
            }
            Optional<String> refused = committed.flatMap(ChargeState::refusalAwaitingStatus);
            if (refused.isPresent()) {
                // the charge sent again was refused and the provider still has none under the key: the refusal was
                // the request's, not a late call's (whose charge would show by now); one landing later still is a late
                // settlement, which the declined payment's watch finds and refunds
                LOG.infof("The provider has no charge of order %s under key %s after refusing the one sent again: "
                        + "declined", task.orderId(), task.chargeIdempotencyKey());
                payments.recordChargeDeclined(task.paymentId(), refused.get());
                return;
            }
            Instant now = Instant.now();
            if (!rechargeWindow.allowsChargeAgain(task.chargingSince(), now)) {
                hold(task, now);
                return;
            }
            if (now.plus(provider.longestExchange()).isAfter(task.claimedUntil())) {
                // the status query and the reads took longer than the lease allows for (a connection waited for in a
                // full pool): a charge sent now could outlast the claim, and another worker charge again beside it
                record(task, new Unresolved("no time left in the claim to charge again"), false);
                return;
            }
            LOG.infof("The provider never saw the charge of order %s: charging again with the same key %s",
                    task.orderId(), task.chargeIdempotencyKey());
            send(task, true);
            return;
        }
        record(task, outcome, cancelling);
    }

    /**
     * The provider has no charge under a key that it may have forgotten by now: a charge sent again could be a second
     * one, so none is; the order waits for an operator, who finds in the provider's dashboard whether the customer was
     * charged, and sends the order back to be charged (retry-payment) or cancels it. The provider's webhook or its
     * settlement report ends the hold if the charge is there after all.
     */
    private void hold(PaymentTask task, Instant now) {
        String age = task.chargingSince() == null ? "at an unknown time"
                : Duration.between(task.chargingSince(), now).toMinutes() + " min ago";
        String reason = "payment provider has no charge under key " + task.chargeIdempotencyKey() + ", charging since "
                + age + " (recharge window " + rechargeWindow.length() + "): it may have forgotten the key, so none is "
                + "sent again; check the provider, then retry-payment or cancel";
        if (payments.recordChargeHeld(task.paymentId(), reason, task.chargingSince(), task.claimedUntil())) {
            chargesHeld.increment();
            LOG.errorf("ALERT charge held for an operator: order %s: %s", task.orderId(), reason);
        }
    }

    /**
     * A declined charge, or one abandoned for a cancelled order, asked about once more: settled after all, it takes the
     * late-settlement path (reported and refunded at once), as the provider's webhook would have had it. Anything else,
     * no answer included, is one look of the bounded watch: the next is scheduled further off.
     */
    private void lookForLateSettlement(PaymentTask task) {
        ChargeOutcome outcome = provider.chargeStatus(task.chargeIdempotencyKey());
        if (outcome instanceof Charged charged) {
            payments.recordChargeSucceeded(task.paymentId(), charged.chargeId());
        } else {
            payments.recordNoLateSettlement(task.paymentId(), task.claimedUntil());
        }
    }

    /**
     * @param cancelling the call asked for the status of a cancelling order's charge: the order's compensation waits
     *                   for its answer, and one that does not come alerts as a failed refund does
     */
    private void record(PaymentTask task, ChargeOutcome outcome, boolean cancelling) {
        if (outcome instanceof Charged charged) {
            try {
                payments.recordChargeSucceeded(task.paymentId(), charged.chargeId());
            } catch (RuntimeException e) {
                if (cancelling) {
                    throw e; // a compensation's step: work() alerts as for any failure of it
                }
                // the customer paid and the saga does not know: it waits until a status query (the claim's lease
                // runs out), the webhook or the report records the charge, which the same cause may stop again
                chargesUnrecorded.increment();
                LOG.errorf(e, "ALERT charge %s of order %s was made at the provider and could not be recorded; asked "
                        + "again when its claim runs out", charged.chargeId(), task.orderId());
            }
        } else if (outcome instanceof Declined declined) {
            payments.recordChargeDeclined(task.paymentId(), declined.reason());
        } else if (outcome instanceof Unresolved unresolved) {
            int attempt = payments.recordChargeUnresolved(task.paymentId(), task.claimedUntil());
            if (attempt > 0 && cancelling) {
                chargeStatusFailures.increment();
                LOG.errorf("ALERT compensation failed: charge status of order %s unanswered (%s), attempt %d: the "
                        + "order's cancellation waits for it; asking again with backoff until it is answered",
                        task.orderId(), unresolved.reason(), attempt);
            } else if (attempt > 0) {
                LOG.warnf("Charge of order %s unresolved (%s), attempt %d: not a decline; asking the provider for its "
                        + "status after a backoff", task.orderId(), unresolved.reason(), attempt);
            }
        } else if (outcome instanceof NotFound) {
            // only the status query answers NotFound; a charge call never does
            payments.recordChargeUnresolved(task.paymentId(), task.claimedUntil());
        }
    }

    private void refund(PaymentTask task) {
        LOG.infof("Refunding %s %s of charge %s for order %s (idempotency key %s)", task.amount(), task.currency(),
                task.chargeId(), task.orderId(), task.refundIdempotencyKey());
        RefundOutcome outcome = provider.refund(task.refundIdempotencyKey(), task.chargeId(), task.amount(),
                task.currency(), task.orderId().toString());
        if (outcome instanceof Refunded refunded) {
            payments.recordRefundSucceeded(task.paymentId(), refunded.refundId());
        } else if (outcome instanceof PaymentProviderClient.RefundFailed failed) {
            int attempt = payments.recordRefundFailed(task.paymentId(), task.claimedUntil(), failed.refused());
            if (attempt > 0) {
                refundFailures.increment();
                LOG.errorf("ALERT compensation failed: refund of order %s attempt %d: %s; retrying with backoff until "
                        + "it succeeds", task.orderId(), attempt, failed.reason());
            }
        }
    }
}
