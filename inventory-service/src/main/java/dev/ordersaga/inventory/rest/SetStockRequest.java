package dev.ordersaga.inventory.rest;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

/** Body of PUT /stock/{sku}: the units available from now on. */
public record SetStockRequest(@NotNull @Min(0) @Max(1_000_000_000) Integer quantity) {
}
