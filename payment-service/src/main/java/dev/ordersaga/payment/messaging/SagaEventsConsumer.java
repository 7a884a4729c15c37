package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.payment.application.PaymentService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * order.events and inventory.events, through one Kafka consumer: OrderCreated opens the payment, StockReserved is
 * what it charges on, OrderCancelling compensates it. A failed reservation needs nothing from payment (the order's
 * OrderCancelling follows) and StockReleased is inventory's own compensation.
 */
@ApplicationScoped
public class SagaEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    PaymentService payments;

    @Incoming("saga-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, event -> {
            if (event.payload() instanceof OrderCreated created) {
                payments.onOrderCreated(event, created);
            } else if (event.payload() instanceof StockReserved reserved) {
                payments.onStockReserved(event, reserved);
            } else if (event.payload() instanceof OrderCancelling cancelling) {
                payments.onOrderCancelling(event, cancelling);
            }
        });
    }
}
