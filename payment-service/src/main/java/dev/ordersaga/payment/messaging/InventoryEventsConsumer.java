package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.payment.application.PaymentService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * inventory.events: StockReserved is what payment charges on. A failed reservation needs nothing from payment (the
 * order's OrderCancelling follows), and StockReleased is inventory's own compensation.
 */
@ApplicationScoped
public class InventoryEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    PaymentService payments;

    @Incoming("inventory-events")
    @Blocking
    public void consume(ConsumerRecord<String, String> record) {
        incoming.process(record, event -> {
            if (event.payload() instanceof StockReserved reserved) {
                payments.onStockReserved(event, reserved);
            }
        });
    }
}
