package dev.ordersaga.shipping.messaging;

import dev.ordersaga.eventing.EventHandlers;
import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.shipping.application.ShippingService;
import dev.ordersaga.shipping.persistence.ShipmentRepository;
import io.smallrye.common.annotation.Blocking;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/**
 * order.events and payment.events, through one Kafka consumer: OrderCreated notes the address, PaymentSucceeded
 * creates the shipment, OrderCancelling cancels it, ShipmentRetryRequested (an operator's) tries the carrier again.
 * Each handler sends the event's inbox claim, which takes the order's lock, with its read of the shipment
 * ({@link EventHandlers.Claiming}): one round trip an event fewer than a claim sent on its own before it.
 */
@ApplicationScoped
public class SagaEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    ShippingService shipping;

    private EventHandlers handlers;

    @PostConstruct
    void init() {
        handlers = EventHandlers.create()
                .lockingOrdersIn(ShipmentRepository.ORDER_LOCK_SPACE)
                .on(OrderCreated.class, shipping::onOrderCreated)
                .on(PaymentSucceeded.class, shipping::onPaymentSucceeded)
                .on(OrderCancelling.class, shipping::onOrderCancelling)
                .on(ShipmentRetryRequested.class, shipping::onShipmentRetryRequested);
    }

    /** The consumer's handlers, for a test that applies an event through {@link IncomingEvents} as it does. */
    EventHandlers handlers() {
        return handlers;
    }

    @Incoming("saga-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, handlers);
    }
}
