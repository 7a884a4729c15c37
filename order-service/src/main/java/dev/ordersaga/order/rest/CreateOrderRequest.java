package dev.ordersaga.order.rest;

import dev.ordersaga.http.NoControlCharacters;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Digits;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;

import java.math.BigDecimal;
import java.util.List;

public record CreateOrderRequest(
        @NotBlank @Size(max = 64) @NoControlCharacters String customerId,
        @NotEmpty @Size(max = 100) List<@Valid @NotNull Item> items,
        @NotNull @Pattern(regexp = "[A-Z]{3}", message = "must be an ISO 4217 code such as EUR") String currency,
        @NotNull @Valid Address shippingAddress,
        @NotBlank @Size(max = 128) @NoControlCharacters String paymentToken) {

    /** The most digits before the point that {@code orders.total}, {@code numeric(19,4)}, holds. */
    static final int MAX_TOTAL_INTEGER_DIGITS = 15;

    public record Item(
            @NotBlank @Size(max = 64) @NoControlCharacters String sku,
            @Min(1) @Max(10_000) int quantity,
            // @DecimalMax says no more than @Digits, but @Digits counts digits in an int, which a price such as
            // 1e2147483647 overflows and passes; the comparison does not
            @NotNull @DecimalMin(value = "0.00") @DecimalMax(value = "9999999999999.9999")
            @Digits(integer = 13, fraction = 4) BigDecimal unitPrice) {
    }

    public record Address(
            @NotBlank @Size(max = 128) @NoControlCharacters String name,
            @NotBlank @Size(max = 128) @NoControlCharacters String line1,
            @Size(max = 128) @NoControlCharacters String line2,
            @NotBlank @Size(max = 64) @NoControlCharacters String city,
            @NotBlank @Size(max = 16) @NoControlCharacters String postalCode,
            @NotNull @Pattern(regexp = "[A-Z]{2}", message = "must be an ISO 3166 alpha-2 code such as GB") String country) {
    }
}
