package dev.ordersaga.inventory.messaging;

import dev.ordersaga.eventing.EventHandlers;
import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderConfirmed;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.inventory.application.InventoryService;
import io.smallrye.common.annotation.Blocking;
import jakarta.annotation.PostConstruct;
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

    private EventHandlers handlers;

    @PostConstruct
    void init() {
        handlers = EventHandlers.create()
                .on(OrderCreated.class, inventory::onOrderCreated)
                .on(OrderCancelling.class, inventory::onOrderCancelling)
                .on(OrderConfirmed.class, inventory::onOrderConfirmed);
        // OrderCancelled, ShipmentRetryRequested: not inventory's business
    }

    @Incoming("order-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, handlers);
    }
}
