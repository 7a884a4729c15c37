package dev.ordersaga.events;

/** Facts published by inventory-service on {@link Topics#INVENTORY_EVENTS}. */
public sealed interface InventoryEvent extends SagaEvent
        permits StockReserved, StockReservationFailed, StockReleased {
}
