package dev.ordersaga.events;

import java.math.BigDecimal;

/** One line of an order: a quantity of a SKU at a unit price in the order's currency. */
public record OrderLine(String sku, int quantity, BigDecimal unitPrice) {
}
