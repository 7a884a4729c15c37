package dev.ordersaga.inventory.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.inventory.application.InventoryService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.eclipse.microprofile.reactive.messaging.Incoming;

@ApplicationScoped
public class OrderEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    InventoryService inventory;

    @Incoming("order-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, event -> {
            if (event.payload() instanceof OrderCreated created) {
                inventory.onOrderCreated(event, created);
            } else if (event.payload() instanceof OrderCancelling cancelling) {
                inventory.onOrderCancelling(event, cancelling);
            } else if (event.payload() instanceof OrderConfirmed confirmed) {
                inventory.onOrderConfirmed(event, confirmed);
            }
            // OrderCancelled, ShipmentRetryRequested: not inventory's business
        });
    }
}
