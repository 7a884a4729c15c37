package dev.ordersaga.payment.rest;

import jakarta.validation.constraints.NotBlank;

import java.math.BigDecimal;

/** The provider's notice that a charge was decided. Fields the provider adds later are ignored. */
public record ProviderWebhook(@NotBlank String type, String chargeId, @NotBlank String idempotencyKey,
                              String reference, BigDecimal amount, String currency, String reason) {

    public static final String CHARGE_SUCCEEDED = "charge.succeeded";
    public static final String CHARGE_DECLINED = "charge.declined";
}
