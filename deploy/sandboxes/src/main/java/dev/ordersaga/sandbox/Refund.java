package dev.ordersaga.sandbox;

import java.math.BigDecimal;
import java.util.Map;

/** A refund the payment sandbox has made (failed refund calls leave none). */
record Refund(String refundId, String idempotencyKey, String chargeId, String reference, BigDecimal amount,
              String currency) {

    static Refund of(String idempotencyKey, RefundRequest request) {
        return new Refund("re_" + Ids.random(), idempotencyKey, request.chargeId(), request.reference(),
                request.amount(), request.currency());
    }

    Response answer() {
        return Response.json(201, Json.object("refundId", refundId, "status", "succeeded"));
    }

    Map<String, Object> ledgerView() {
        return Json.object("refundId", refundId, "idempotencyKey", idempotencyKey, "chargeId", chargeId,
                "reference", reference, "amount", amount, "currency", currency);
    }
}
