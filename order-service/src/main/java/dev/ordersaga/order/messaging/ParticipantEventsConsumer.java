package dev.ordersaga.order.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.PaymentRefunded;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.SagaEvent;
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

    @Incoming("participant-events")
    @Blocking
    public void consume(ConsumerRecords<String, String> records) {
        incoming.processAll(records, this::dispatch);
    }

    private void dispatch(EventEnvelope<SagaEvent> event) {
        SagaEvent fact = event.payload();
        if (fact instanceof StockReserved) {
            orders.apply(event, Order::onStockReserved);
        } else if (fact instanceof StockReservationFailed failed) {
            orders.apply(event, o -> o.onStepFailed("out of stock: " + String.join(", ", failed.unavailableSkus())));
        } else if (fact instanceof StockReleased) {
            orders.apply(event, o -> o.onCompensated(Participant.INVENTORY));
        } else if (fact instanceof PaymentSucceeded) {
            orders.apply(event, Order::onPaymentSucceeded);
        } else if (fact instanceof PaymentFailed failed) {
            orders.apply(event, o -> o.onStepFailed("payment failed: " + failed.reason()));
        } else if (fact instanceof PaymentRefunded) {
            orders.apply(event, o -> o.onCompensated(Participant.PAYMENT));
        } else if (fact instanceof ShipmentCreated) {
            orders.apply(event, Order::onShipmentCreated);
        } else if (fact instanceof ShipmentFailed failed) {
            orders.apply(event, o -> o.onStepFailed("shipment failed: " + failed.reason()));
        } else if (fact instanceof ShipmentOnHold onHold) {
            orders.apply(event, o -> {
                o.onShipmentOnHold(onHold.reason());
                return Optional.empty();
            });
        } else if (fact instanceof ShipmentCancelled) {
            orders.apply(event, o -> o.onCompensated(Participant.SHIPPING));
        } else {
            orders.apply(event, o -> Optional.empty());
        }
    }
}
