package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.Topics;
import dev.ordersaga.shipping.application.ShippingService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Incoming;

@ApplicationScoped
public class PaymentEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    ShippingService shipping;

    @Incoming("payment-events")
    @Blocking
    public void consume(String message) {
        incoming.process(Topics.PAYMENT_EVENTS, message, event -> {
            if (event.payload() instanceof PaymentSucceeded succeeded) {
                shipping.onPaymentSucceeded(event, succeeded);
            }
        });
    }
}
