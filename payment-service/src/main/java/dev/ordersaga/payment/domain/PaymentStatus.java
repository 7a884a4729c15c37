package dev.ordersaga.payment.domain;

/**
 * <pre>
 * PENDING -> CHARGING -> SUCCEEDED | DECLINED
 * SUCCEEDED -> REFUNDING -> REFUNDED
 * PENDING -> CANCELLED
 * DECLINED | CANCELLED -> REFUNDING   (the provider settled a charge late: it is refunded at once)
 * </pre>
 */
public enum PaymentStatus {
    PENDING, CHARGING, SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED;

    /** A call to the provider is owed while the payment is in this state. */
    public boolean awaitsProvider() {
        return this == CHARGING || this == REFUNDING;
    }
}
