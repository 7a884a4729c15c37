package dev.ordersaga.shipping.application;

import java.time.Instant;
import java.util.UUID;

/** A shipment has carrier work at {@code at}; fired inside a transaction, acted on once it committed. */
public record ShipmentDue(UUID shipmentId, Instant at) {
}
