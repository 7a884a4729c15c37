package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.shipping.application.ShippingService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;

@ApplicationScoped
public class PaymentEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    ShippingService shipping;

    @Incoming("payment-events")
    @Blocking
    public void consume(ConsumerRecord<String, String> record) {
        incoming.process(record, event -> {
            if (event.payload() instanceof PaymentSucceeded succeeded) {
                shipping.onPaymentSucceeded(event, succeeded);
            }
        });
    }
}
