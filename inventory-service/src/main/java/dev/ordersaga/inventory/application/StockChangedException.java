package dev.ordersaga.inventory.application;

import dev.ordersaga.inventory.domain.Stock;

/** A conditional set of a SKU's stock found other counts than the caller read, or no SKU at all. */
public class StockChangedException extends RuntimeException {

    private final transient Stock current;

    StockChangedException(String sku, Stock current) {
        super(current == null ? "there is no stock for SKU " + sku
                : "the stock of " + sku + " changed since it was read: now " + current.available() + " available, "
                  + current.reserved() + " reserved, " + current.shipped() + " shipped (ETag \"" + current.tag()
                  + "\"); read it again and set it from there");
        this.current = current;
    }

    /** The counts found, or null when the SKU does not exist. */
    public Stock current() {
        return current;
    }
}
