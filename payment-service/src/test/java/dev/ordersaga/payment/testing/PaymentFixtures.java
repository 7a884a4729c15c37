package dev.ordersaga.payment.testing;

import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.OrderLine;
import dev.ordersaga.events.ShippingAddress;
import dev.ordersaga.events.StockItem;
import dev.ordersaga.events.StockReserved;

import java.math.BigDecimal;
import java.util.List;
import java.util.UUID;

/** Small immutable fixtures: the facts payment-service hears. */
public final class PaymentFixtures {

    public static final BigDecimal TOTAL = new BigDecimal("21.00");

    private PaymentFixtures() {
    }

    /** Two mugs at 10.50 EUR, paid with the given sandbox token. */
    public static OrderCreated orderCreated(String paymentToken) {
        return new OrderCreated("cust-1", List.of(new OrderLine("SKU-MUG", 2, new BigDecimal("10.50"))), TOTAL, "EUR",
                new ShippingAddress("Ada Lovelace", "12 St James Square", null, "London", "SW1Y 4JH", "GB"),
                paymentToken);
    }

    public static StockReserved stockReserved() {
        return new StockReserved("res-" + UUID.randomUUID(), List.of(new StockItem("SKU-MUG", 2)));
    }

    public static OrderCancelling orderCancelling() {
        return new OrderCancelling("payment test", "customer");
    }
}
