package dev.ordersaga.sandbox;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Objects;

/** A refund the payment sandbox has made (failed refund calls leave none). */
record Refund(String refundId, String idempotencyKey, String chargeId, String reference, BigDecimal amount,
              String currency) {

    static Refund of(String idempotencyKey, RefundRequest request) {
        return new Refund("re_" + Ids.random(), idempotencyKey, request.chargeId(), request.reference(),
                request.amount(), request.currency());
    }

    /** Whether {@code request} is the one this refund was made for, as a repeat under its key must be. */
    boolean madeFor(RefundRequest request) {
        return chargeId.equals(request.chargeId()) && amount.compareTo(request.amount()) == 0
                && currency.equals(request.currency()) && Objects.equals(reference, request.reference());
    }

    Response answer() {
        return Response.json(201, Json.object("refundId", refundId, "status", "succeeded"));
    }

    Map<String, Object> ledgerView() {
        return Json.object("refundId", refundId, "idempotencyKey", idempotencyKey, "chargeId", chargeId,
                "reference", reference, "amount", amount, "currency", currency);
    }
}
