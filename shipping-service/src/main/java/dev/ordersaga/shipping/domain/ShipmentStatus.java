package dev.ordersaga.shipping.domain;

/**
 * <pre>
 * PENDING -> REQUESTED -> CREATED | REJECTED | ON_HOLD
 * ON_HOLD -> REQUESTED                       (an operator asked to retry)
 * ON_HOLD -> CREATED                         (a create call of an earlier claim landed after all)
 * REQUESTED | ON_HOLD -> CANCELLING          (cancelled while a shipment may exist at the carrier: a create call
 *                                             timed out or its claim ran out unanswered; looked up by its key)
 * CREATED -> CANCELLING -> CANCELLED         (compensation at the carrier, or confirmed by an operator)
 * PENDING | REQUESTED | ON_HOLD | REJECTED -> CANCELLED   (nothing to undo at the carrier)
 * CANCELLED -> CANCELLING                    (a create call that landed after the cancellation found nothing)
 * </pre>
 */
public enum ShipmentStatus {
    /** Waiting for what the shipment needs: the order (its address) and the payment. */
    PENDING,
    /** Both are in: the carrier is asked to create the shipment (now, or at the next scheduled attempt). */
    REQUESTED,
    /** The carrier created the shipment. */
    CREATED,
    /** The carrier refused the shipment for good. */
    REJECTED,
    /** The carrier stayed unavailable for every automatic attempt: an operator decides. */
    ON_HOLD,
    /** The order is cancelled: the carrier is asked to cancel the shipment (retried until it succeeds). */
    CANCELLING,
    /** Nothing of this shipment is left at the carrier, unless a create call still lands (then CANCELLING again). */
    CANCELLED;

    /** States in which the carrier has work to do at the row's next_attempt_at. */
    public boolean hasCarrierWork() {
        return this == REQUESTED || this == CANCELLING;
    }
}
