package dev.ordersaga.shipping.application;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.shipping.domain.IllegalTransitionException;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import dev.ordersaga.shipping.persistence.ShipmentRepository.UnknownAtCarrier;
import dev.ordersaga.shipping.provider.CarrierClient;
import dev.ordersaga.shipping.provider.CarrierClient.ReportedShipment;
import dev.ordersaga.work.ProviderReport;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Reads the carrier's shipment report ({@link ProviderReport}) and applies every live shipment the service does not
 * know of as the create call's answer would have been: a create the carrier carried out after our client had timed
 * out, which the order's cancellation then looked for too early and found nothing of, is cancelled at the carrier
 * (CANCELLED -> CANCELLING); one a cancellation is still looking for by its key is recorded, so that it is cancelled
 * by its id whatever the lookup finds (a carrier that forgot the key finds nothing); one created while the shipment went
 * on hold, or while its create call awaits an answer, is recorded (ON_HOLD | REQUESTED -> CREATED). Before, the first
 * left a parcel to go out for a cancelled order, with nothing to tell.
 */
@ApplicationScoped
@Startup // its counter exists from the start, at zero, for the alert rule
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

    @Inject
    SurplusCancels surplus;

    private ProviderReport<ReportedShipment> report;
    private Counter unmatched;

    @PostConstruct
    void init() {
        report = ProviderReport.configured("shipping.reconciliation", "carrier-shipments", carrier::shipments, writes,
                meters);
        // registered up front, so that an alert on its increase sees the first incident
        unmatched = meters.counter("saga.shipping.shipments.unmatched");
    }

    @PreDestroy
    void close() {
        report.removeGauge();
    }

    @Scheduled(every = "${shipping.reconciliation.interval}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduled() {
        report.readOnScheduled(page -> apply(page).size());
    }

    /**
     * Reads the report on from where it was read to; returns the shipments it applied a parcel to, once for each
     * parcel (what the service's own work did meanwhile is in it too, so a caller looks for the shipments it knows).
     */
    public List<UUID> reconcile() {
        return report.readOnApplying(this::apply);
    }

    private List<UUID> apply(List<ReportedShipment> reported) {
        Map<UUID, List<String>> liveParcels = new LinkedHashMap<>();
        for (ReportedShipment shipment : reported) {
            if (!shipment.live()) {
                continue;
            }
            UUID shipmentId = ownKey(shipment);
            if (shipmentId == null) {
                LOG.debugf("Shipment report: shipment %s is not one of ours", shipment.carrierShipmentId());
            } else {
                liveParcels.computeIfAbsent(shipmentId, id -> new ArrayList<>()).add(shipment.carrierShipmentId());
            }
        }
        otherShipments(reported, liveParcels.keySet());
        List<UnknownAtCarrier> unknown = QuarkusTransaction.requiringNew()
                .call(() -> shipments.unknownAtCarrierAmong(liveParcels.keySet()));
        List<UUID> applied = new ArrayList<>();
        for (UnknownAtCarrier shipment : unknown) {
            // the first is adopted; any other under the same key (a carrier that forgot it) is then a second parcel
            for (String carrierId : liveParcels.get(shipment.id())) {
                if (adopted(shipment, carrierId)) {
                    applied.add(shipment.id());
                }
            }
        }
        return applied;
    }

    private boolean adopted(UnknownAtCarrier shipment, String carrierId) {
        try (Correlation.Scope ignored = Correlation.open(shipment.correlationId(), shipment.causedByEventId())) {
            LOG.infof("Shipment report: the carrier holds shipment %s of order %s, and the shipment is %s", carrierId,
                    shipment.orderId(), shipment.status());
            ShippingService.CarrierShipmentNoted noted = shipping.onCreatedAtCarrier(shipment.id(), carrierId);
            // its create call's answer, or another parcel of this report, was recorded since the read
            noted.recordedAnother().ifPresent(recorded -> anotherParcel(recorded, carrierId));
            if (!noted.recorded()) {
                // not this read's news: the same parcel, known from its create call's answer, or another one's
                return false;
            }
            meters.counter("saga.shipping.shipments.reconciled").increment();
            return true;
        } catch (IllegalTransitionException e) {
            LOG.warnf("Shipment report: shipment %s not applied: %s", carrierId, e.getMessage());
            return false;
        }
    }

    /**
     * A live shipment under a shipment's key that is not the carrier shipment the shipment recorded: a second parcel,
     * which a carrier makes when it has forgotten the key (an operator's retry-shipping long after a create that went
     * through unseen). It is cancelled on its own ({@link SurplusCancels}), and it is an ALERT for a person all the
     * same, with {@code saga_shipping_shipments_unmatched_total}, once for each such shipment.
     */
    private void otherShipments(List<ReportedShipment> reported, Set<UUID> shipmentIds) {
        Map<UUID, ShipmentRepository.AtCarrier> recorded = QuarkusTransaction.requiringNew()
                .call(() -> shipments.recordedAtCarrierAmong(shipmentIds));
        for (ReportedShipment shipment : reported) {
            if (!shipment.live()) {
                continue;
            }
            UUID shipmentId = ownKey(shipment);
            ShipmentRepository.AtCarrier ours = shipmentId == null ? null : recorded.get(shipmentId);
            if (ours == null || ours.carrierShipmentId().equals(shipment.carrierShipmentId())) {
                continue;
            }
            anotherParcel(ours, shipment.carrierShipmentId());
        }
    }

    /**
     * A live carrier shipment under the key of a shipment that recorded another one, or that the carrier refused:
     * cancelled on its own, an ALERT and a count once for each, however often the report or a create call's answer
     * shows it.
     */
    void anotherParcel(ShipmentRepository.AtCarrier ours, String carrierShipmentId) {
        if (surplus.found(ours, carrierShipmentId)) {
            try (Correlation.Scope ignored = Correlation.open(ours.correlationId(), null)) {
                LOG.errorf("ALERT shipment of another parcel: the carrier holds shipment %s under the key of shipment "
                                + "%s (order %s), which recorded %s: a second parcel; it is being cancelled",
                        carrierShipmentId, ours.id(), ours.orderId(), ours.carrierShipmentId() == null
                                ? "none (the carrier refused the shipment)" : "carrier shipment " + ours.carrierShipmentId());
            }
            unmatched.increment();
        }
    }

    /**
     * The shipment whose create key the carrier's shipment has (a shipment's id is its create call's idempotency key);
     * null if it is not one of ours.
     */
    private static UUID ownKey(ReportedShipment shipment) {
        try {
            return UUID.fromString(shipment.idempotencyKey());
        } catch (IllegalArgumentException notOurs) {
            return null;
        }
    }
}
