package dev.ordersaga.payment.domain;

/**
 * <pre>
 * PENDING -> CHARGING -> SUCCEEDED | DECLINED
 * SUCCEEDED -> REFUNDING -> REFUNDED
 * PENDING -> CANCELLED
 * CHARGING -> CANCELLED               (the order is cancelling and the provider has no charge: none is sent;
 *                                     watched for a late settlement, as DECLINED is)
 * DECLINED | CANCELLED -> REFUNDING   (the provider settled a charge late: it is refunded at once)
 * CHARGING, held                      (the provider has no charge under a key it may have forgotten: an operator's;
 *                                     see Payment#chargeHeld)
 * </pre>
 */
public enum PaymentStatus {
    PENDING, CHARGING, SUCCEEDED, DECLINED, REFUNDING, REFUNDED, CANCELLED;

    /**
     * A call to the provider is owed while the payment is in this state. (A DECLINED payment, or one CANCELLED after
     * the provider had no charge, may owe a look for a late settlement for a while: {@link Payment#nextCall()} says.)
     */
    public boolean awaitsProvider() {
        return this == CHARGING || this == REFUNDING;
    }

    /**
     * A charge may still be sent from this state: before charging, or while charging (a held charge an operator sends
     * back included). From any other no charge is ever sent again, so the customer's payment token is not kept.
     */
    public boolean mayCharge() {
        return this == PENDING || this == CHARGING;
    }

    /**
     * News that the charge succeeded changes nothing in this state or any it can reach: the success is recorded and
     * no later state forgets it. A provider's repeat can then be answered from an unlocked read.
     */
    public boolean hasChargeSucceeded() {
        return this == SUCCEEDED || this == REFUNDING || this == REFUNDED;
    }

    /** News that the charge was declined changes nothing in this state or any it can reach: the charge is settled. */
    public boolean ignoresChargeDeclined() {
        return this != PENDING && this != CHARGING;
    }
}
