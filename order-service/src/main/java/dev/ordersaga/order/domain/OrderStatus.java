package dev.ordersaga.order.domain;

public enum OrderStatus {
    PENDING, STOCK_RESERVED, PAID, SHIPPING_CREATED, CONFIRMED, COMPENSATING, CANCELLED;

    /** A finished order never moves again: late events are recorded and handled by rule, not applied. */
    public boolean isFinal() {
        return this == CONFIRMED || this == CANCELLED;
    }
}
