package dev.ordersaga.sandbox;

import java.util.Map;

/** A shipment the carrier sandbox has created; its status is "created" or "cancelled". */
record Shipment(String shipmentId, String idempotencyKey, String reference, String status) {

    static Shipment create(String idempotencyKey, String reference) {
        return new Shipment("shp_" + Ids.random(), idempotencyKey, reference, "created");
    }

    Shipment cancelled() {
        return new Shipment(shipmentId, idempotencyKey, reference, "cancelled");
    }

    Map<String, Object> view() {
        return Json.object("shipmentId", shipmentId, "idempotencyKey", idempotencyKey, "reference", reference,
                "status", status);
    }
}
