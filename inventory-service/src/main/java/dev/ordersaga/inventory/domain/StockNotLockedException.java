package dev.ordersaga.inventory.domain;

import dev.ordersaga.eventing.NotRetryable;

/**
 * A reservation holds a SKU whose stock row its handler did not lock: there is no such row (the reservation and the
 * stock disagree), and no retry will make one, so the event is parked for an operator rather than retried.
 */
public class StockNotLockedException extends RuntimeException implements NotRetryable {

    StockNotLockedException(String sku) {
        super("stock of " + sku + " is not locked: the reservation holds a SKU with no stock row");
    }
}
