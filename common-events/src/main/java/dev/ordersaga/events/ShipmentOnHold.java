package dev.ordersaga.events;

/** Step 4 ran out of automatic retries (carrier down): the order waits for an operator; nothing is refunded. */
public record ShipmentOnHold(String shipmentId, String reason, int attempts) implements ShippingEvent {
}
