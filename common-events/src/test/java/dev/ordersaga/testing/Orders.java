package dev.ordersaga.testing;

import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.OrderLine;
import dev.ordersaga.events.ShippingAddress;

import java.math.BigDecimal;
import java.util.List;

/** Small immutable fixtures of orders, as JSON requests and as events. */
public final class Orders {

    private Orders() {
    }

    public static OrderCreated created() {
        return new OrderCreated("cust-1", List.of(new OrderLine("SKU-MUG", 2, new BigDecimal("10.50"))),
                new BigDecimal("21.00"), "EUR",
                new ShippingAddress("Ada Lovelace", "12 St James Square", null, "London", "SW1Y 4JH", "GB"), "tok_ok");
    }

    /** The body of a valid POST /orders: two mugs at 10.50 EUR. */
    public static String requestJson() {
        return requestJson("SKU-MUG", 2, "10.50", "tok_ok");
    }

    public static String requestJson(String sku, int quantity, String unitPrice, String paymentToken) {
        return """
                {"customerId": "cust-1",
                 "items": [{"sku": "%s", "quantity": %d, "unitPrice": %s}],
                 "currency": "EUR",
                 "shippingAddress": {"name": "Ada Lovelace", "line1": "12 St James Square", "city": "London",
                                     "postalCode": "SW1Y 4JH", "country": "GB"},
                 "paymentToken": "%s"}""".formatted(sku, quantity, unitPrice, paymentToken);
    }
}
