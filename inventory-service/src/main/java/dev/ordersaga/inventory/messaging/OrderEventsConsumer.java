package dev.ordersaga.inventory.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.Topics;
import dev.ordersaga.inventory.application.InventoryService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.reactive.messaging.Incoming;

@ApplicationScoped
public class OrderEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    InventoryService inventory;

    @Incoming("order-events")
    @Blocking
    @Transactional
    public void consume(String message) {
        incoming.apply(Topics.ORDER_EVENTS, message, event -> {
            if (event.payload() instanceof OrderCreated created) {
                inventory.onOrderCreated(event, created);
            }
        });
    }
}
