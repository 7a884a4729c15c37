package dev.ordersaga.events;

import java.math.BigDecimal;

/** Step 5: stock reserved, paid and shipment created; the saga ended well. */
public record OrderConfirmed(BigDecimal total, String currency) implements OrderEvent {
}
