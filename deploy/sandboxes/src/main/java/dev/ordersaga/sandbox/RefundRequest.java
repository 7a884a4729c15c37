package dev.ordersaga.sandbox;

import java.math.BigDecimal;

/** The body of POST /v1/refunds. */
record RefundRequest(String chargeId, BigDecimal amount, String currency, String reference) {

    RefundRequest validated() {
        Validation.required("chargeId", chargeId);
        Validation.positive("amount", amount);
        Validation.required("currency", currency);
        return this;
    }
}
