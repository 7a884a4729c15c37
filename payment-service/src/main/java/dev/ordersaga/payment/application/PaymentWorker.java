package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.payment.provider.PaymentProviderClient;
import dev.ordersaga.payment.provider.PaymentProviderClient.ChargeOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Charged;
import dev.ordersaga.payment.provider.PaymentProviderClient.Declined;
import dev.ordersaga.payment.provider.PaymentProviderClient.NotFound;
import dev.ordersaga.payment.provider.PaymentProviderClient.RefundOutcome;
import dev.ordersaga.payment.provider.PaymentProviderClient.Refunded;
import dev.ordersaga.payment.provider.PaymentProviderClient.Unresolved;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Makes the provider calls that payments owe — charge, charge status, refund — outside any transaction:
 * <ol>
 *   <li>claim the payment in a short transaction ({@link PaymentService#claim}: {@code FOR UPDATE SKIP LOCKED} plus a
 *       lease on {@code next_attempt_at}), so two workers, of this replica or another, never act on one row at once;</li>
 *   <li>call the provider with the payment's idempotency key, in the saga's correlation scope, no transaction open;</li>
 *   <li>record the outcome in a new transaction through the state machine (which publishes via the outbox).</li>
 * </ol>
 * A payment is worked on as soon as the transaction that made it due has committed (or when its backoff ends), and
 * a periodic sweep picks up whatever is due and was not (a crash, a restart, a lost wake-up).
 */
@ApplicationScoped
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

    private ScheduledExecutorService executor;
    private volatile boolean stopping;
    private Counter refundFailures;

    @PostConstruct
    void start() {
        AtomicInteger n = new AtomicInteger();
        executor = Executors.newScheduledThreadPool(threads, runnable -> {
            Thread thread = new Thread(runnable, "payment-worker-" + n.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        refundFailures = Counter.builder("saga.compensation.failures")
                .description("Compensations that failed and will be retried")
                .tag("step", "refund")
                .register(meters);
    }

    /** Before the datasource and Hibernate go: no new claims; claimed payments are retried when their lease ends. */
    void onShutdown(@Observes ShutdownEvent event) {
        stopping = true;
    }

    @PreDestroy
    void stop() throws InterruptedException {
        executor.shutdownNow();
        executor.awaitTermination(5, TimeUnit.SECONDS);
    }

    /** Wakes the worker for a payment once the transaction that scheduled it has committed. */
    void onDue(@Observes(during = TransactionPhase.AFTER_SUCCESS) PaymentDue due) {
        if (stopping) {
            return;
        }
        if (due.claimed() != null) {
            try {
                executor.execute(() -> work(due.claimed()));
            } catch (RejectedExecutionException e) {
                LOG.infof("Worker stopping: payment %s is retried when its lease ends", due.paymentId());
            }
            return;
        }
        // rounded up: woken a fraction of a millisecond early, the claim would find the payment not yet due
        long delayMillis = Math.max(0, Duration.between(Instant.now(), due.at()).toNanos() / 1_000_000 + 1);
        try {
            executor.schedule(() -> {
                try {
                    if (stopping) {
                        return;
                    }
                    payments.claim(due.paymentId()).ifPresent(this::work);
                } catch (RuntimeException e) {
                    LOG.errorf(e, "Could not work on payment %s; the sweep retries it", due.paymentId());
                }
            }, delayMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.infof("Worker stopping: payment %s is left to the next sweep", due.paymentId());
        }
    }

    /** Crash recovery and backstop: every payment whose next attempt is due, claimed in batches. */
    @Scheduled(every = "${payment.worker.sweep-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        if (stopping || executor.isShutdown()) {
            return;
        }
        List<PaymentTask> tasks = payments.claimDue(batchSize);
        if (tasks.isEmpty()) {
            return;
        }
        List<Callable<Void>> work = tasks.stream().<Callable<Void>>map(task -> () -> {
            work(task);
            return null;
        }).toList();
        try {
            executor.invokeAll(work);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RejectedExecutionException e) {
            LOG.infof("Worker stopping: %d claimed payment(s) are retried when their lease ends", tasks.size());
        }
    }

    void work(PaymentTask task) {
        try (Correlation.Scope ignored = Correlation.open(task.correlationId(), task.causedByEventId())) {
            switch (task.call()) {
                case CHARGE -> charge(task);
                case CHARGE_STATUS -> askForChargeStatus(task);
                case REFUND -> refund(task);
                case NONE -> LOG.debugf("Payment %s of order %s owes the provider nothing", task.paymentId(), task.orderId());
            }
        } catch (RuntimeException e) {
            LOG.errorf(e, "Provider call for payment %s of order %s failed unexpectedly; retried when its lease ends",
                    task.paymentId(), task.orderId());
        }
    }

    private void charge(PaymentTask task) {
        LOG.infof("Charging %s %s for order %s (idempotency key %s)", task.amount(), task.currency(), task.orderId(),
                task.chargeIdempotencyKey());
        ChargeOutcome outcome = provider.charge(task.chargeIdempotencyKey(), task.amount(), task.currency(),
                task.paymentToken(), task.orderId().toString());
        record(task, outcome);
    }

    private void askForChargeStatus(PaymentTask task) {
        ChargeOutcome outcome = provider.chargeStatus(task.chargeIdempotencyKey());
        if (outcome instanceof NotFound) {
            LOG.infof("The provider never saw the charge of order %s: charging again with the same key %s",
                    task.orderId(), task.chargeIdempotencyKey());
            charge(task);
            return;
        }
        record(task, outcome);
    }

    private void record(PaymentTask task, ChargeOutcome outcome) {
        if (outcome instanceof Charged charged) {
            payments.recordChargeSucceeded(task.paymentId(), charged.chargeId());
        } else if (outcome instanceof Declined declined) {
            payments.recordChargeDeclined(task.paymentId(), declined.reason());
        } else if (outcome instanceof Unresolved unresolved) {
            int attempt = payments.recordChargeUnresolved(task.paymentId());
            if (attempt > 0) {
                LOG.warnf("Charge of order %s unresolved (%s), attempt %d: not a decline; asking the provider for its "
                        + "status after a backoff", task.orderId(), unresolved.reason(), attempt);
            }
        } else if (outcome instanceof NotFound) {
            // only the status query answers NotFound; a charge call never does
            payments.recordChargeUnresolved(task.paymentId());
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
            int attempt = payments.recordRefundFailed(task.paymentId());
            if (attempt > 0) {
                refundFailures.increment();
                LOG.errorf("ALERT compensation failed: refund of order %s attempt %d: %s; retrying with backoff until "
                        + "it succeeds", task.orderId(), attempt, failed.reason());
            }
        }
    }
}
