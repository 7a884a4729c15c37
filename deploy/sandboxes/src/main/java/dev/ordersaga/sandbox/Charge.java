package dev.ordersaga.sandbox;

import java.math.BigDecimal;
import java.util.Map;
import java.util.Objects;

/** A charge the payment sandbox has decided; {@code reason} is null when it succeeded. */
record Charge(String chargeId, String idempotencyKey, String reference, BigDecimal amount, String currency,
              String token, boolean succeeded, String reason) {

    static Charge decide(String idempotencyKey, ChargeRequest request) {
        CardToken token = CardToken.of(request.token());
        return new Charge("ch_" + Ids.random(), idempotencyKey, request.reference(), request.amount(),
                request.currency(), request.token(), token.succeeds(), token.succeeds() ? null : token.declineReason());
    }

    /** Whether {@code request} is the one this charge was made for, as a repeat under its key must be. */
    boolean madeFor(ChargeRequest request) {
        return amount.compareTo(request.amount()) == 0 && currency.equals(request.currency())
                && token.equals(request.token()) && Objects.equals(reference, request.reference());
    }

    Charge settledLate() {
        return new Charge(chargeId, idempotencyKey, reference, amount, currency, token, true, null);
    }

    String status() {
        return succeeded ? "succeeded" : "declined";
    }

    /** The answer to POST /v1/charges, the first time and on every repetition with the same key. */
    Response answer() {
        return succeeded
                ? Response.json(201, Json.object("chargeId", chargeId, "status", status(), "amount", amount,
                        "currency", currency, "reference", reference))
                : Response.json(402, Json.object("status", status(), "reason", reason));
    }

    /** The answer to the status query GET /v1/charges/{idempotencyKey}. */
    Map<String, Object> statusView() {
        return Json.object("chargeId", chargeId, "status", status(), "amount", amount, "currency", currency,
                "reference", reference, "idempotencyKey", idempotencyKey, "reason", reason);
    }

    Map<String, Object> ledgerView() {
        return Json.object("chargeId", chargeId, "idempotencyKey", idempotencyKey, "reference", reference,
                "amount", amount, "currency", currency, "status", status(), "token", token);
    }

    Map<String, Object> webhookPayload() {
        return Json.object("type", "charge." + status(), "chargeId", chargeId, "idempotencyKey", idempotencyKey,
                "reference", reference, "amount", amount, "currency", currency, "reason", reason);
    }
}
