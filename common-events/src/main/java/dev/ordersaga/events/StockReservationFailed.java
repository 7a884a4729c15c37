package dev.ordersaga.events;

import java.util.List;

/** Step 2 failed: nothing was reserved. */
public record StockReservationFailed(String reason, List<String> unavailableSkus) implements InventoryEvent {
}
