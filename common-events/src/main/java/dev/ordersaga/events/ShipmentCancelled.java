package dev.ordersaga.events;

/**
 * Compensation of step 4: the shipment is cancelled at the carrier (or none had been created).
 *
 * @param confirmedBy null when the carrier's API confirmed it; else who confirmed it by hand, and why (an operator who
 *                    settled with the carrier a cancel its API kept refusing), for the order's timeline: the order is
 *                    refunded on that word
 */
public record ShipmentCancelled(String shipmentId, String confirmedBy) implements ShippingEvent {

    public ShipmentCancelled(String shipmentId) {
        this(shipmentId, null);
    }
}
