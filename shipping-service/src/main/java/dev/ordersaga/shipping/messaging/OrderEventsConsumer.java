package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.shipping.application.ShippingService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;

@ApplicationScoped
public class OrderEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    ShippingService shipping;

    @Incoming("order-events")
    @Blocking
    public void consume(ConsumerRecord<String, String> record) {
        incoming.process(record, event -> {
            if (event.payload() instanceof OrderCreated created) {
                shipping.onOrderCreated(event, created);
            } else if (event.payload() instanceof OrderCancelling cancelling) {
                shipping.onOrderCancelling(event, cancelling);
            } else if (event.payload() instanceof ShipmentRetryRequested retry) {
                shipping.onShipmentRetryRequested(event, retry);
            }
        });
    }
}
