package dev.ordersaga.events;

/** Compensation of step 4: the shipment is cancelled at the carrier (or none had been created). */
public record ShipmentCancelled(String shipmentId) implements ShippingEvent {
}
