package dev.ordersaga.order.rest;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.ordersaga.order.domain.Order;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** An order as its customer and operators see it: where it is, and why it was cancelled or why it waits. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record OrderView(UUID orderId, String status, String correlationId, String customerId, List<Item> items,
                        BigDecimal total, String currency, String cancelReason, String waitingReason,
                        Instant waitingSince, Instant createdAt, Instant updatedAt) {

    public record Item(String sku, int quantity, BigDecimal unitPrice) {
    }

    static OrderView of(Order order) {
        return new OrderView(order.id(), order.status().name(), order.correlationId(), order.customerId(),
                order.items().stream().map(i -> new Item(i.sku(), i.quantity(), i.unitPrice())).toList(),
                order.total(), order.currency(), order.cancelReason(), order.waitingReason(), order.waitingSince(),
                order.createdAt(), order.updatedAt());
    }
}
