package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.EventHandlers;
import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentRetryRequested;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.payment.application.PaymentService;
import dev.ordersaga.payment.persistence.PaymentRepository;
import io.smallrye.common.annotation.Blocking;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * order.events and inventory.events, through one Kafka consumer: OrderCreated opens the payment, StockReserved is
 * what it charges on, OrderCancelling compensates it. A failed reservation needs nothing from payment (the order's
 * OrderCancelling follows) and StockReleased is inventory's own compensation.
 *
 * <p>Each handler sends the event's inbox claim with its first read, the payment's locked row, and the claim takes the
 * order's advisory lock before either: one round trip an event, where the claim alone was one more.
 */
@ApplicationScoped
public class SagaEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    PaymentService payments;

    private EventHandlers handlers;

    @PostConstruct
    void init() {
        handlers = EventHandlers.create()
                .lockingOrdersIn(PaymentRepository.ORDER_LOCK_SPACE)
                .on(OrderCreated.class, payments::onOrderCreated)
                .on(StockReserved.class, payments::onStockReserved)
                .on(OrderCancelling.class, payments::onOrderCancelling)
                .on(PaymentRetryRequested.class, payments::onPaymentRetryRequested);
    }

    /** The handlers as the consumer applies events through them, for a test to apply an event as a delivery would. */
    EventHandlers handlers() {
        return handlers;
    }

    @Incoming("saga-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, handlers);
    }
}
