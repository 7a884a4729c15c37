package dev.ordersaga.events;

import java.util.List;

/** Step 2: every line of the order is reserved (reservations are all-or-nothing). */
public record StockReserved(String reservationId, List<StockItem> items) implements InventoryEvent {
}
