package dev.ordersaga.events;

import java.math.BigDecimal;
import java.util.List;

/**
 * Step 1: an order was accepted as PENDING. Carries what the participants need to take their step, so that
 * none of them has to call order-service. The payment token is the provider's opaque token, never card data.
 */
public record OrderCreated(String customerId, List<OrderLine> items, BigDecimal total, String currency,
                           ShippingAddress shippingAddress, String paymentToken) implements OrderEvent {
}
