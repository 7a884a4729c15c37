package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.shipping.domain.IllegalTransitionException;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import dev.ordersaga.shipping.persistence.ShipmentRepository.UnknownAtCarrier;
import dev.ordersaga.shipping.provider.CarrierClient;
import dev.ordersaga.shipping.provider.CarrierClient.ReportedShipment;
import dev.ordersaga.work.ProviderReport;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Reads the carrier's shipment report ({@link ProviderReport}) and applies every live shipment the service does not
 * know of as the create call's answer would have been: a create the carrier carried out after our client had timed
 * out, which the order's cancellation then looked for too early and found nothing of, is cancelled at the carrier
 * (CANCELLED -> CANCELLING); one created while the shipment went on hold is recorded (ON_HOLD -> CREATED). Before, the
 * first left a parcel to go out for a cancelled order, with nothing to tell.
 */
@ApplicationScoped
public class CarrierReconciliation {

    private static final Logger LOG = Logger.getLogger(CarrierReconciliation.class);

    @Inject
    CarrierClient carrier;

    @Inject
    ShipmentRepository shipments;

    @Inject
    ShippingService shipping;

    @Inject
    TransactionalWrites writes;

    @Inject
    MeterRegistry meters;

    private ProviderReport<ReportedShipment> report;

    @PostConstruct
    void init() {
        report = ProviderReport.configured("shipping.reconciliation", "carrier-shipments", carrier::shipments, writes);
    }

    @Scheduled(every = "${shipping.reconciliation.interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        report.readOnScheduled(this::apply);
    }

    /** Reads the report on from where it was read to; returns the shipments it applied. */
    public int reconcile() {
        return report.readOn(this::apply);
    }

    private int apply(List<ReportedShipment> reported) {
        Map<UUID, String> carrierIds = new HashMap<>();
        for (ReportedShipment shipment : reported) {
            if (!shipment.live()) {
                continue;
            }
            try {
                // the shipment's id is its create call's idempotency key; any other key is not this service's
                carrierIds.put(UUID.fromString(shipment.idempotencyKey()), shipment.carrierShipmentId());
            } catch (IllegalArgumentException notOurs) {
                LOG.debugf("Shipment report: shipment %s is not one of ours", shipment.carrierShipmentId());
            }
        }
        List<UnknownAtCarrier> unknown = QuarkusTransaction.requiringNew()
                .call(() -> shipments.unknownAtCarrierAmong(carrierIds.keySet()));
        int applied = 0;
        for (UnknownAtCarrier shipment : unknown) {
            String carrierId = carrierIds.get(shipment.id());
            try (Correlation.Scope ignored = Correlation.open(shipment.correlationId(), shipment.causedByEventId())) {
                LOG.infof("Shipment report: the carrier holds shipment %s of order %s, and the shipment is %s", carrierId,
                        shipment.orderId(), shipment.status());
                shipping.onCreatedAtCarrier(shipment.id(), carrierId);
                meters.counter("saga.shipping.shipments.reconciled").increment();
                applied++;
            } catch (IllegalTransitionException e) {
                LOG.warnf("Shipment report: shipment %s not applied: %s", carrierId, e.getMessage());
            }
        }
        return applied;
    }
}
