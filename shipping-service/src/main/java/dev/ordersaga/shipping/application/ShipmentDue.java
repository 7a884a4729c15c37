package dev.ordersaga.shipping.application;

import java.time.Instant;
import java.util.UUID;

/**
 * A shipment has carrier work at {@code at}, to be claimed then; fired inside a transaction, acted on once it
 * committed. Work due at once is claimed in that very transaction instead ({@link ClaimedCalls}).
 */
public record ShipmentDue(UUID shipmentId, Instant at) {
}
