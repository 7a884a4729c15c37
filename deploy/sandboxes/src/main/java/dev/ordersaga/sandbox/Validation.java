package dev.ordersaga.sandbox;

import java.math.BigDecimal;

/** The few checks of request bodies, each failing as a 400 that names the field. */
final class Validation {

    private Validation() {
    }

    static void required(String field, String value) {
        if (value == null || value.isBlank()) {
            throw ApiException.badRequest(field + " is required");
        }
    }

    static void positive(String field, BigDecimal value) {
        if (value == null || value.signum() <= 0) {
            throw ApiException.badRequest(field + " must be a number > 0");
        }
    }
}
