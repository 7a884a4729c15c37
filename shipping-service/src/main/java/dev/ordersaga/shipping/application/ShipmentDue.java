package dev.ordersaga.shipping.application;

import java.time.Instant;
import java.util.UUID;

/**
 * A shipment has carrier work at {@code at}; fired inside a transaction, acted on once it committed. Work due at
 * once was claimed in that very transaction: {@code claimed} is then the call to make, with no claiming
 * transaction of the worker's own.
 */
public record ShipmentDue(UUID shipmentId, Instant at, CarrierWork claimed) {

    static ShipmentDue later(UUID shipmentId, Instant at) {
        return new ShipmentDue(shipmentId, at, null);
    }

    static ShipmentDue claimed(CarrierWork work, Instant now) {
        return new ShipmentDue(work.shipmentId(), now, work);
    }
}
