package dev.ordersaga.events;

/** Step 4: the carrier accepted the shipment. */
public record ShipmentCreated(String shipmentId, String carrierShipmentId) implements ShippingEvent {
}
