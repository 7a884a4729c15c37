package dev.ordersaga.inventory.domain;

import dev.ordersaga.eventing.NotRetryable;

/** A stock movement that would leave a count below zero. Stock is never negative. */
public class NegativeStockException extends RuntimeException implements NotRetryable {

    public NegativeStockException(String message) {
        super(message);
    }

    static NegativeStockException moving(String sku, String movement, int quantity, String count, long held) {
        return new NegativeStockException("cannot " + movement + " " + quantity + " of " + sku + ": " + count + " is " + held);
    }
}
