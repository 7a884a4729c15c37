package dev.ordersaga.sandbox;

import java.math.BigDecimal;

/** The body of POST /v1/charges. */
record ChargeRequest(BigDecimal amount, String currency, String token, String reference) {

    ChargeRequest validated() {
        Validation.positive("amount", amount);
        Validation.required("currency", currency);
        Validation.required("token", token);
        return this;
    }
}
