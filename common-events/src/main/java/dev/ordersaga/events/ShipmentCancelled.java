package dev.ordersaga.events;

/**
 * Compensation of step 4: the shipment is cancelled at the carrier (or none had been created).
 *
 * @param confirmedBy  null when the carrier's API confirmed it; else the operator who confirmed it by hand, having
 *                     settled with the carrier a cancel its API kept refusing: the order is refunded on their word, so
 *                     order-service logs it among the order's operator actions
 * @param confirmation with {@code confirmedBy}: what the operator gave as the carrier's word
 */
public record ShipmentCancelled(String shipmentId, String confirmedBy, String confirmation) implements ShippingEvent {

    public ShipmentCancelled(String shipmentId) {
        this(shipmentId, null, null);
    }
}
