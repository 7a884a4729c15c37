package dev.ordersaga.events;

/** Step 4 failed for good (the carrier rejected the shipment): the saga compensates. */
public record ShipmentFailed(String shipmentId, String reason) implements ShippingEvent {
}
