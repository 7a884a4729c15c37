package dev.ordersaga.events;

import java.util.List;

/**
 * The Kafka topics of the saga: one per publishing service, keyed by order id, and for each consuming service one
 * parking topic and one replay topic of its own.
 */
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

    /**
     * Where an operator's replay of a parked message goes: the service that parked it consumes it with its events,
     * and no other service does. A service then writes only topics of its own (its events, its parked and replayed
     * messages), so that topic ACLs can keep it from publishing another service's facts.
     */
    public static final String ORDER_REPLAY = "order.replay";
    public static final String INVENTORY_REPLAY = "inventory.replay";
    public static final String PAYMENT_REPLAY = "payment.replay";
    public static final String SHIPPING_REPLAY = "shipping.replay";

    public static final List<String> EVENT_TOPICS = List.of(ORDER_EVENTS, INVENTORY_EVENTS, PAYMENT_EVENTS, SHIPPING_EVENTS);
    public static final List<String> DLQ_TOPICS = List.of(ORDER_DLQ, INVENTORY_DLQ, PAYMENT_DLQ, SHIPPING_DLQ);
    public static final List<String> REPLAY_TOPICS = List.of(ORDER_REPLAY, INVENTORY_REPLAY, PAYMENT_REPLAY, SHIPPING_REPLAY);

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
