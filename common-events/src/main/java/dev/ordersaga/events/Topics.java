package dev.ordersaga.events;

import java.util.List;

/** The Kafka topics of the saga: one per publishing service, keyed by order id, and one parking topic per consumer. */
public final class Topics {

    public static final String ORDER_EVENTS = "order.events";
    public static final String INVENTORY_EVENTS = "inventory.events";
    public static final String PAYMENT_EVENTS = "payment.events";
    public static final String SHIPPING_EVENTS = "shipping.events";

    /** Where a consumer parks a message it cannot process (malformed, or failing for good). */
    public static final String ORDER_DLQ = "order.dlq";
    public static final String INVENTORY_DLQ = "inventory.dlq";
    public static final String PAYMENT_DLQ = "payment.dlq";
    public static final String SHIPPING_DLQ = "shipping.dlq";

    public static final List<String> EVENT_TOPICS = List.of(ORDER_EVENTS, INVENTORY_EVENTS, PAYMENT_EVENTS, SHIPPING_EVENTS);
    public static final List<String> DLQ_TOPICS = List.of(ORDER_DLQ, INVENTORY_DLQ, PAYMENT_DLQ, SHIPPING_DLQ);

    private Topics() {
    }

    /** The topic an event is published on, decided by its producer. */
    public static String of(SagaEvent event) {
        if (event instanceof OrderEvent) {
            return ORDER_EVENTS;
        } else if (event instanceof InventoryEvent) {
            return INVENTORY_EVENTS;
        } else if (event instanceof PaymentEvent) {
            return PAYMENT_EVENTS;
        } else if (event instanceof ShippingEvent) {
            return SHIPPING_EVENTS;
        }
        throw new IllegalArgumentException("no producer group for " + event.getClass().getName());
    }
}
