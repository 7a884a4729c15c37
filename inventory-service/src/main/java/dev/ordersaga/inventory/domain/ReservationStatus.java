package dev.ordersaga.inventory.domain;

/**
 * <pre>
 * RESERVED -> RELEASED | CONSUMED
 * FAILED   -> RELEASED            (answering a cancel)
 * </pre>
 */
public enum ReservationStatus {
    RESERVED, FAILED, RELEASED, CONSUMED;

    /** A finished reservation never moves again. */
    public boolean isFinal() {
        return this == RELEASED || this == CONSUMED;
    }
}
