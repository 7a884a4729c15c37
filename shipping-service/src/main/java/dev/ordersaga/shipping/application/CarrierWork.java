package dev.ordersaga.shipping.application;

import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;

import java.time.Instant;
import java.util.UUID;

/**
 * A claimed carrier call, as the worker needs it outside the transaction: what to call, and the saga scope to log
 * and publish under.
 *
 * @param attempt         the number of this attempt of the step (1 for the first)
 * @param causedByEventId the event that started the step: PaymentSucceeded (or what completed it) for a create,
 *                        OrderCancelling for a cancel
 * @param claimedUntil    the claim this call is made under, reported with a failure: one that comes after the claim
 *                        was replaced is ignored ({@link Shipment#isClaimedBy})
 */
public record CarrierWork(Kind kind, UUID shipmentId, UUID orderId, String correlationId, UUID causedByEventId,
                          Address address, String carrierShipmentId, int attempt, Instant claimedUntil) {

    public enum Kind {
        CREATE, CANCEL
    }

    static CarrierWork of(Shipment shipment) {
        if (shipment.status() == ShipmentStatus.CANCELLING) {
            return new CarrierWork(Kind.CANCEL, shipment.id(), shipment.orderId(), shipment.correlationId(),
                    shipment.cancelCausedByEventId(), shipment.address(), shipment.carrierShipmentId(),
                    shipment.cancelAttempts() + 1, shipment.claimedUntil());
        }
        return new CarrierWork(Kind.CREATE, shipment.id(), shipment.orderId(), shipment.correlationId(),
                shipment.causedByEventId(), shipment.address(), shipment.carrierShipmentId(), shipment.attempts() + 1,
                shipment.claimedUntil());
    }

    /** The idempotency key of the create call; the carrier answers a repeat with the same shipment. */
    public String createKey() {
        return shipmentId.toString();
    }
}
