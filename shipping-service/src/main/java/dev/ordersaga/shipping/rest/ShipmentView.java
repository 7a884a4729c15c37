package dev.ordersaga.shipping.rest;

import dev.ordersaga.shipping.domain.Shipment;

import java.time.Instant;
import java.util.UUID;

/** A shipment and its carrier schedule, for operators and tests. */
public record ShipmentView(UUID shipmentId, UUID orderId, String status, int attempts, Instant nextAttemptAt,
                           String carrierShipmentId, String lastError, boolean cancelRequested, int cancelAttempts,
                           boolean cancelRefused, Instant updatedAt) {

    static ShipmentView of(Shipment shipment) {
        return new ShipmentView(shipment.id(), shipment.orderId(), shipment.status().name(), shipment.attempts(),
                shipment.nextAttemptAt(), shipment.carrierShipmentId(), shipment.lastError(),
                shipment.isCancelRequested(), shipment.cancelAttempts(), shipment.cancelRefused(),
                shipment.updatedAt());
    }
}
