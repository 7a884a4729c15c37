package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.IllegalTransitionException;
import dev.ordersaga.shipping.provider.CarrierClient;
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

/**
 * Makes the carrier calls, outside any transaction, on the shared {@link ProviderCalls} runtime: the row is claimed
 * (by the transaction that left the work, or later by a {@code FOR UPDATE SKIP LOCKED} claim with a lease), the
 * carrier is called with the row's idempotency key, and the outcome recorded through {@link ShippingService} in a
 * new transaction. A claim whose caller died runs out, and the row is taken up again with the same key.
 */
@ApplicationScoped
// made before the scheduler starts (priority 0): a lease its calls can outlast stops the service before any sweep
@Startup(Interceptor.Priority.PLATFORM_BEFORE - 1)
public class ShipmentWorker {

    private static final Logger LOG = Logger.getLogger(ShipmentWorker.class);

    @Inject
    CarrierReconciliation reconciliation;

    @Inject
    ShippingService shipping;

    @Inject
    CarrierClient carrier;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "shipping.worker.threads", defaultValue = "4")
    int threads;

    @ConfigProperty(name = "shipping.worker.batch-size", defaultValue = "20")
    int batchSize;

    @ConfigProperty(name = "shipping.worker.lease")
    Duration lease;

    private ProviderCalls<CarrierWork> calls;
    private Counter parcelsUnrecorded;

    @PostConstruct
    void start() {
        // the longest call: a cancel that looks its shipment up by key first
        ProviderCalls.requireLeaseOutlasts("shipping.worker.lease", lease, carrier.longestExchange().multipliedBy(2),
                "a lookup and a cancel, each up to 3 x shipping.carrier.timeout");
        calls = new ProviderCalls<>("shipment-worker", threads, shipping::claim, shipping::claimDue, this::perform, lease);
        // registered up front, so that the alert rule sees a zero rather than no series
        parcelsUnrecorded = Counter.builder("saga.provider.outcomes.unrecorded")
                .description("Charges and parcels the provider made that the service could not record")
                .tag("outcome", "parcel")
                .register(meters);
    }

    void stop(@Observes ShutdownEvent event) {
        calls.stop();
    }

    /** After the commit of a transaction that left carrier work due later: claim and call when due. */
    void onDue(@Observes(during = TransactionPhase.AFTER_SUCCESS) ShipmentDue due) {
        calls.due(due.shipmentId(), due.at(), null);
    }

    /**
     * After the commit of a transaction that claimed calls: make the ones it left claimed, at once, unless the claim is
     * half its lease old by now (the rest of a long batch before the commit): its lease began with the claim.
     */
    void onClaimed(@Observes(during = TransactionPhase.AFTER_SUCCESS) ClaimedCalls claimed) {
        claimed.calls().forEach(work -> calls.due(work.shipmentId(), work.claimedUntil().minus(lease), work));
    }

    /** Crash recovery and everything the wake-ups missed: the rows whose next attempt is due. */
    @Scheduled(every = "${shipping.worker.sweep-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        calls.sweep(batchSize);
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
                if (work.kind() == CarrierWork.Kind.CANCEL) {
                    // a compensation that keeps failing alerts whatever the cause, an error of ours as well as the
                    // carrier's refusal (ShippingService.onCancelFailed)
                    shipping.countCompensationFailure();
                    LOG.errorf(e, "ALERT compensation failed: shipment cancel of order %s (shipment %s) failed "
                            + "unexpectedly; retried when its claim runs out", work.orderId(), work.shipmentId());
                    return;
                }
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
            created(work, created.carrierShipmentId());
        } else if (result instanceof CarrierClient.Rejected rejected) {
            shipping.onRejectedByCarrier(work, rejected.reason());
        } else if (result instanceof CarrierClient.Unavailable unavailable) {
            shipping.onCarrierUnavailable(work, unavailable.reason(), unavailable.uncertain());
        } else {
            throw new IllegalStateException("unknown carrier answer " + result);
        }
    }

    private void created(CarrierWork work, String carrierShipmentId) {
        ShippingService.CarrierShipmentNoted noted;
        try {
            noted = shipping.onCreatedAtCarrier(work.shipmentId(), carrierShipmentId);
        } catch (IllegalTransitionException e) {
            throw e;
        } catch (RuntimeException e) {
            // a parcel is on its way and the saga does not know: it waits until the create is made again under the
            // same key (the claim's lease runs out) or the report records it, which the same cause may stop again
            parcelsUnrecorded.increment();
            LOG.errorf(e, "ALERT parcel %s of order %s was made at the carrier and could not be recorded (shipment "
                    + "%s); created again under the same key when its claim runs out", carrierShipmentId,
                    work.orderId(), work.shipmentId());
            return;
        }
        // the carrier's report may have recorded a parcel of an earlier call under this key meanwhile
        noted.recordedAnother().ifPresent(recorded -> reconciliation.anotherParcel(recorded, carrierShipmentId));
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
                shipping.onCancelFailed(work, null, failed.reason(), failed.refused());
                return;
            } else if (lookup instanceof CarrierClient.Found found) {
                carrierShipmentId = found.carrierShipmentId();
            } else {
                throw new IllegalStateException("unknown carrier answer " + lookup);
            }
        }
        LOG.infof("Cancelling shipment %s (%s) of order %s at the carrier (attempt %d)", work.shipmentId(),
                carrierShipmentId, work.orderId(), work.attempt());
        CarrierClient.CancelResult result = carrier.cancel(carrierShipmentId);
        if (result instanceof CarrierClient.Cancelled) {
            cancelled(work, carrierShipmentId);
        } else if (result instanceof CarrierClient.UnknownShipment) {
            // the id came from the carrier (its answer to the create, a lookup or its report), so a 404 is its
            // error (a lagging replica, a gateway mid-deploy), not "nothing to cancel": taken for a cancel, the order
            // would be refunded while the parcel may still go out. Retried with an alert, as for a surplus parcel.
            shipping.onCancelFailed(work, carrierShipmentId, "the carrier does not know shipment " + carrierShipmentId,
                    true);
        } else if (result instanceof CarrierClient.CancelFailed failed) {
            // a parcel the lookup found is kept with the failure: cancelled by its id from now on
            shipping.onCancelFailed(work, carrierShipmentId, failed.reason(), failed.refused());
        } else {
            throw new IllegalStateException("unknown carrier answer " + result);
        }
    }

    private void cancelled(CarrierWork work, String carrierShipmentId) {
        // a lookup under a key the carrier forgot can find a parcel other than the one recorded meanwhile: a second one
        shipping.onCancelledAtCarrier(work.shipmentId(), carrierShipmentId)
                .ifPresent(recorded -> reconciliation.anotherParcel(recorded, carrierShipmentId));
    }

    private static CarrierClient.Destination destination(Address address) {
        return new CarrierClient.Destination(address.name(), address.line1(), address.line2(), address.city(),
                address.postalCode(), address.country());
    }
}
