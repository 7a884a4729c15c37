package dev.ordersaga.events;

/** A quantity of one SKU, as reserved or released. */
public record StockItem(String sku, int quantity) {
}
