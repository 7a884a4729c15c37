package dev.ordersaga.events;

/** Facts published by order-service on {@link Topics#ORDER_EVENTS}. */
public sealed interface OrderEvent extends SagaEvent
        permits OrderCreated, OrderCancelling, OrderConfirmed, OrderCancelled, ShipmentRetryRequested,
        PaymentRetryRequested {
}
