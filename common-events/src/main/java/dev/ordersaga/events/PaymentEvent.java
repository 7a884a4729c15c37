package dev.ordersaga.events;

/** Facts published by payment-service on {@link Topics#PAYMENT_EVENTS}. */
public sealed interface PaymentEvent extends SagaEvent
        permits PaymentSucceeded, PaymentFailed, PaymentOnHold, PaymentRefunded {
}
