package dev.ordersaga.order.rest;

import java.util.UUID;

public record OrderCreatedResponse(UUID orderId, String status, String correlationId) {
}
