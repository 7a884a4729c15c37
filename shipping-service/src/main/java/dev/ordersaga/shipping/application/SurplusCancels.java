package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.retry.Backoff;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import dev.ordersaga.shipping.provider.CarrierClient;
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

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Cancels the second shipments the carrier created under shipments' keys ({@link CarrierReconciliation} finds them in
 * its shipment report; {@link Surpluses} has the rule), under the parcel's cancel key ({@link CarrierClient#cancel}),
 * the one a cancellation of the shipment that went on to this parcel used, if one did.
 */
@ApplicationScoped
@Startup // its counters exist from the start, at zero, for the alert rules
public class SurplusCancels {

    private static final Logger LOG = Logger.getLogger(SurplusCancels.class);

    @Inject
    TransactionalWrites writes;

    @Inject
    CarrierClient carrier;

    @Inject
    MeterRegistry meters;

    @ConfigProperty(name = "shipping.worker.lease")
    Duration lease;

    @ConfigProperty(name = "shipping.retry.base-delay")
    Duration baseDelay;

    @ConfigProperty(name = "shipping.retry.max-delay")
    Duration maxDelay;

    private Surpluses surpluses;

    @PostConstruct
    void start() {
        surpluses = new Surpluses("surplus_shipment", "surplus-cancel", "cancel of surplus shipment", writes, this::cancel,
                lease, new Backoff(baseDelay, maxDelay), meters, "saga.shipping.surplus.cancels");
    }

    void onShutdown(@Observes ShutdownEvent event) {
        surpluses.stop();
    }

    /** @return whether the carrier shipment was news */
    boolean found(ShipmentRepository.AtCarrier shipment, String carrierShipmentId) {
        return surpluses.found(shipment.id(), shipment.orderId(), shipment.correlationId(), carrierShipmentId);
    }

    @Scheduled(every = "${shipping.surplus.sweep-interval:10s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sweep() {
        surpluses.sweep(20);
    }

    private Surpluses.Outcome cancel(Surplus shipment) {
        LOG.infof("Cancelling surplus shipment %s of order %s at the carrier (idempotency key %s)", shipment.providerRef(),
                shipment.orderId(), CarrierClient.cancelKey(shipment.providerRef()));
        CarrierClient.CancelResult result = carrier.cancel(shipment.providerRef());
        if (result instanceof CarrierClient.Cancelled) {
            return new Surpluses.Undone("cancelled");
        }
        if (result instanceof CarrierClient.UnknownShipment) {
            // the report listed it, so the carrier knows it: a 404 is the carrier's error, not "nothing to cancel",
            // and one no retry mends (as the shipment's own cancel takes it)
            return new Surpluses.Failed("the carrier does not know shipment " + shipment.providerRef(), true);
        }
        CarrierClient.CancelFailed failed = (CarrierClient.CancelFailed) result;
        return new Surpluses.Failed(failed.reason(), failed.refused());
    }

    /** The second parcels found of an order, oldest first, with their cancels' state. */
    public List<Surpluses.Recorded> ofOrder(UUID orderId) {
        return surpluses.ofOrder(orderId);
    }

    /**
     * Records a second parcel's cancel, which the carrier keeps refusing, as settled with the carrier outside its API
     * on an operator's word ({@link Surpluses#confirmUndoneByHand}).
     */
    public Optional<Surpluses.Recorded> confirmCancelledByHand(UUID orderId, String carrierShipmentId, String operator,
                                                               String reason) {
        return surpluses.confirmUndoneByHand(orderId, carrierShipmentId, null, operator, reason);
    }
}
