package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.IllegalTransitionException;
import dev.ordersaga.shipping.provider.CarrierClient;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Makes the carrier calls, outside any transaction: claim the row (short transaction), call the carrier with the
 * row's idempotency key, record the outcome through {@link ShippingService} (new transaction).
 *
 * <p>Woken right after a transaction that left carrier work committed (at once, or at the scheduled time of the next
 * attempt), and, for everything a wake-up missed (a restart, a crash, another replica's rows), a periodic sweep of
 * the rows whose persisted {@code next_attempt_at} has come. A row is claimed with {@code FOR UPDATE SKIP LOCKED}
 * and a lease, so two workers, in one process or in two replicas, never call for the same row at once; a claim whose
 * caller died runs out, and the row is taken up again with the same idempotency key.
 */
@ApplicationScoped
public class ShipmentWorker {

    private static final Logger LOG = Logger.getLogger(ShipmentWorker.class);

    @Inject
    ShippingService shipping;

    @Inject
    CarrierClient carrier;

    @ConfigProperty(name = "shipping.worker.threads", defaultValue = "4")
    int threads;

    @ConfigProperty(name = "shipping.worker.batch-size", defaultValue = "20")
    int batchSize;

    private ScheduledThreadPoolExecutor executor;

    @PostConstruct
    void start() {
        AtomicInteger count = new AtomicInteger();
        ThreadFactory factory = runnable -> {
            Thread thread = new Thread(runnable, "shipment-worker-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
        executor = new ScheduledThreadPoolExecutor(threads, factory);
        // what is scheduled for later is in the rows: the next start's sweep picks it up
        executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        executor.setRemoveOnCancelPolicy(true);
    }

    void stop(@Observes ShutdownEvent event) {
        executor.shutdown();
        try {
            if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            executor.shutdownNow();
        }
    }

    /** After the commit of a transaction that left carrier work: claim and call at the scheduled time. */
    void onDue(@Observes(during = TransactionPhase.AFTER_SUCCESS) ShipmentDue due) {
        if (due.claimed() != null) {
            try {
                executor.execute(() -> perform(due.claimed()));
            } catch (RejectedExecutionException e) {
                LOG.debugf("Worker stopping: claimed shipment %s is left to the next start", due.shipmentId());
            }
            return;
        }
        long delay = Math.max(0, Duration.between(Instant.now(), due.at()).toMillis());
        try {
            executor.schedule(() -> runClaimed(due.shipmentId()), delay, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debugf("Worker stopping: shipment %s is left to the next sweep", due.shipmentId());
        }
    }

    /** Crash recovery and everything the wake-ups missed: the rows whose next attempt is due. */
    @Scheduled(every = "${shipping.worker.sweep-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        if (executor.isShutdown()) {
            return;
        }
        List<CarrierWork> claimed;
        try {
            claimed = shipping.claimDue(batchSize);
        } catch (RuntimeException e) {
            LOG.warnf(e, "Sweep for due shipments failed; trying again at the next sweep");
            return;
        }
        for (CarrierWork work : claimed) {
            try {
                executor.execute(() -> perform(work));
            } catch (RejectedExecutionException e) {
                LOG.debugf("Worker stopping: claimed shipment %s is left to the next start", work.shipmentId());
            }
        }
    }

    private void runClaimed(UUID shipmentId) {
        try {
            shipping.claim(shipmentId).ifPresent(this::perform);
        } catch (RuntimeException e) {
            LOG.warnf(e, "Could not claim shipment %s; the sweep tries again", shipmentId);
        }
    }

    /** One carrier call (or two, for a cancel that must look its shipment up first) and its outcome. */
    void perform(CarrierWork work) {
        try (Correlation.Scope ignored = Correlation.open(work.correlationId(), work.causedByEventId())) {
            try {
                switch (work.kind()) {
                    case CREATE -> create(work);
                    case CANCEL -> cancel(work);
                }
            } catch (IllegalTransitionException e) {
                // another worker recorded an outcome first (this one's lease had run out): that outcome stands
                LOG.warnf("Outcome for shipment %s of order %s not recorded: %s", work.shipmentId(), work.orderId(),
                        e.getMessage());
            } catch (RuntimeException e) {
                LOG.errorf(e, "Carrier work for shipment %s of order %s failed; retried when its claim runs out",
                        work.shipmentId(), work.orderId());
            }
        }
    }

    private void create(CarrierWork work) {
        LOG.infof("Requesting shipment %s of order %s at the carrier (attempt %d)", work.shipmentId(), work.orderId(),
                work.attempt());
        CarrierClient.CreateResult result = carrier.create(work.createKey(), work.orderId().toString(),
                destination(work.address()));
        if (result instanceof CarrierClient.Created created) {
            shipping.onCreatedAtCarrier(work.shipmentId(), created.carrierShipmentId());
        } else if (result instanceof CarrierClient.Rejected rejected) {
            shipping.onRejectedByCarrier(work.shipmentId(), rejected.reason());
        } else if (result instanceof CarrierClient.Unavailable unavailable) {
            shipping.onCarrierUnavailable(work.shipmentId(), unavailable.reason(), unavailable.uncertain());
        } else {
            throw new IllegalStateException("unknown carrier answer " + result);
        }
    }

    private void cancel(CarrierWork work) {
        String carrierShipmentId = work.carrierShipmentId();
        if (carrierShipmentId == null) {
            // a create call may have gone through without us learning the id: ask by its idempotency key
            LOG.infof("Looking up shipment %s of order %s at the carrier before cancelling (attempt %d)",
                    work.shipmentId(), work.orderId(), work.attempt());
            CarrierClient.LookupResult lookup = carrier.find(work.createKey());
            if (lookup instanceof CarrierClient.NotFound) {
                shipping.onCancelledAtCarrier(work.shipmentId(), null);
                return;
            } else if (lookup instanceof CarrierClient.LookupFailed failed) {
                shipping.onCancelFailed(work.shipmentId(), failed.reason());
                return;
            } else if (lookup instanceof CarrierClient.Found found) {
                carrierShipmentId = found.carrierShipmentId();
            } else {
                throw new IllegalStateException("unknown carrier answer " + lookup);
            }
        }
        LOG.infof("Cancelling shipment %s (%s) of order %s at the carrier (attempt %d)", work.shipmentId(),
                carrierShipmentId, work.orderId(), work.attempt());
        CarrierClient.CancelResult result = carrier.cancel(carrierShipmentId, work.cancelKey());
        if (result instanceof CarrierClient.Cancelled) {
            shipping.onCancelledAtCarrier(work.shipmentId(), carrierShipmentId);
        } else if (result instanceof CarrierClient.UnknownShipment) {
            LOG.warnf("The carrier does not know shipment %s of order %s: nothing to cancel", carrierShipmentId,
                    work.orderId());
            shipping.onCancelledAtCarrier(work.shipmentId(), carrierShipmentId);
        } else if (result instanceof CarrierClient.CancelFailed failed) {
            shipping.onCancelFailed(work.shipmentId(), failed.reason());
        } else {
            throw new IllegalStateException("unknown carrier answer " + result);
        }
    }

    private static CarrierClient.Destination destination(Address address) {
        return new CarrierClient.Destination(address.name(), address.line1(), address.line2(), address.city(),
                address.postalCode(), address.country());
    }
}
