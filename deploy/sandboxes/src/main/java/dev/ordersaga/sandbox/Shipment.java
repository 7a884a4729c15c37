package dev.ordersaga.sandbox;

import java.util.Map;

/**
 * A shipment the carrier sandbox has created; its status is "created" or "cancelled".
 *
 * @param cancellable false for a parcel handed to the courier at once, whose cancel the carrier refuses
 */
record Shipment(String shipmentId, String idempotencyKey, String reference, String status, boolean cancellable) {

    static Shipment create(String idempotencyKey, String reference, boolean cancellable) {
        return new Shipment("shp_" + Ids.random(), idempotencyKey, reference, "created", cancellable);
    }

    Shipment cancelled() {
        return new Shipment(shipmentId, idempotencyKey, reference, "cancelled", cancellable);
    }

    Map<String, Object> view() {
        return Json.object("shipmentId", shipmentId, "idempotencyKey", idempotencyKey, "reference", reference,
                "status", status);
    }
}
