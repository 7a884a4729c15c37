package dev.ordersaga.events;

import java.util.List;

/** Compensation of step 2: the reservation is released (or there was none to release: items is empty). */
public record StockReleased(String reservationId, List<StockItem> items) implements InventoryEvent {
}
