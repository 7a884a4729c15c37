package dev.ordersaga.events;

/** Facts published by shipping-service on {@link Topics#SHIPPING_EVENTS}. */
public sealed interface ShippingEvent extends SagaEvent
        permits ShipmentCreated, ShipmentFailed, ShipmentOnHold, ShipmentCancelled {
}
