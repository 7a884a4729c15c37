package dev.ordersaga.order.messaging;

import dev.ordersaga.eventing.EventHandlers;
import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.PaymentOnHold;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.ShipmentCreated;
import dev.ordersaga.events.ShipmentFailed;
import dev.ordersaga.events.ShipmentOnHold;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.StockReservationFailed;
import dev.ordersaga.events.StockReserved;
import dev.ordersaga.order.application.OrderService;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.Order.Participant;
import io.smallrye.common.annotation.Blocking;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.util.Optional;

/**
 * The facts of inventory, payment and shipping, each applied to its order; the three topics through one Kafka
 * consumer. The mapping from event to the order's reaction is the table of the README's event flow.
 */
@ApplicationScoped
public class ParticipantEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    OrderService orders;

    private EventHandlers handlers;

    @PostConstruct
    void init() {
        handlers = EventHandlers.create()
                .on(StockReserved.class, (event, fact, claim) -> orders.apply(event, claim, Order::onStockReserved))
                .on(StockReservationFailed.class, (event, failed, claim) -> orders.apply(event, claim,
                        o -> o.onStepFailed("out of stock: " + String.join(", ", failed.unavailableSkus()))))
                .on(StockReleased.class, (event, fact, claim) -> orders.apply(event, claim, o -> o.onCompensated(Participant.INVENTORY)))
                .on(PaymentSucceeded.class, (event, succeeded, claim) -> orders.apply(event, claim,
                        succeeded.refundedAtOnce() ? Order::onChargeRefundedAtOnce : Order::onPaymentSucceeded))
                .on(PaymentFailed.class, (event, failed, claim) -> orders.apply(event, claim,
                        o -> o.onStepFailed("payment failed: " + failed.reason())))
                .on(PaymentOnHold.class, (event, onHold, claim) -> orders.apply(event, claim, o -> {
                    o.onPaymentOnHold(onHold.reason());
                    return Optional.empty();
                }))
                .on(PaymentRefunded.class, (event, fact, claim) -> orders.apply(event, claim, o -> o.onCompensated(Participant.PAYMENT)))
                .on(ShipmentCreated.class, (event, fact, claim) -> orders.apply(event, claim, Order::onShipmentCreated))
                .on(ShipmentFailed.class, (event, failed, claim) -> orders.apply(event, claim,
                        o -> o.onStepFailed("shipment failed: " + failed.reason())))
                .on(ShipmentOnHold.class, (event, onHold, claim) -> orders.apply(event, claim, o -> {
                    o.onShipmentOnHold(onHold.reason());
                    return Optional.empty();
                }))
                .on(ShipmentCancelled.class, (event, fact, claim) -> orders.apply(event, claim, o -> o.onCompensated(Participant.SHIPPING)))
                // any other fact of a participant is still noted in the saga's timeline
                .otherwise((event, fact, claim) -> orders.apply(event, claim, o -> Optional.empty()));
    }

    @Incoming("participant-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, handlers);
    }
}
