package dev.ordersaga.payment.messaging;

import dev.ordersaga.eventing.IncomingEvents;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.payment.application.PaymentService;
import io.smallrye.common.annotation.Blocking;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;

/** order.events: OrderCreated opens the payment, OrderCancelling compensates it. Other facts concern others. */
@ApplicationScoped
public class OrderEventsConsumer {

    @Inject
    IncomingEvents incoming;

    @Inject
    PaymentService payments;

    @Incoming("order-events")
    @Blocking
    public void consume(ConsumerRecord<String, String> record) {
        incoming.process(record, event -> {
            if (event.payload() instanceof OrderCreated created) {
                payments.onOrderCreated(event, created);
            } else if (event.payload() instanceof OrderCancelling cancelling) {
                payments.onOrderCancelling(event, cancelling);
            }
        });
    }
}
