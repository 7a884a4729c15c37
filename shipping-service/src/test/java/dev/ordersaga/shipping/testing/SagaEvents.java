package dev.ordersaga.shipping.testing;

import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelling;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.PaymentSucceeded;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.ShipmentRetryRequested;
import dev.ordersaga.events.ShippingAddress;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.Orders;
import dev.ordersaga.testing.TestSaga;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.math.BigDecimal;
import java.util.UUID;

/**
 * One saga's events as the other services would publish them: same order id, same correlation id. Registered with
 * {@code @RegisterExtension static}: the producer is opened before the class's first test and closed after its last.
 */
public final class SagaEvents implements BeforeAllCallback, AfterAllCallback {

    private KafkaTestProducer producer;

    @Override
    public void beforeAll(ExtensionContext context) {
        producer = new KafkaTestProducer();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (producer != null) {
            producer.close();
        }
    }

    /** A saga of a new order. */
    public Saga saga() {
        return new Saga(new TestSaga(producer, "shipping-test"));
    }

    public static final class Saga {

        private final TestSaga saga;

        private Saga(TestSaga saga) {
            this.saga = saga;
        }

        public UUID orderId() {
            return saga.orderId();
        }

        public String correlationId() {
            return saga.correlationId();
        }

        public <E extends SagaEvent> EventEnvelope<E> envelope(E event) {
            return saga.envelope(event);
        }

        /** Publishes on the event's topic, keyed by the order id, and waits for the broker's acknowledgement. */
        public <E extends SagaEvent> EventEnvelope<E> send(E event) {
            return saga.publish(event);
        }

        public <E extends SagaEvent> EventEnvelope<E> send(EventEnvelope<E> envelope) {
            return saga.publish(envelope);
        }
    }

    public static OrderCreated orderCreated() {
        return Orders.created();
    }

    public static OrderCreated orderCreatedTo(String line1) {
        OrderCreated order = Orders.created();
        ShippingAddress a = order.shippingAddress();
        return new OrderCreated(order.customerId(), order.items(), order.total(), order.currency(),
                new ShippingAddress(a.name(), line1, a.line2(), a.city(), a.postalCode(), a.country()), order.paymentToken());
    }

    public static PaymentSucceeded paymentSucceeded() {
        return new PaymentSucceeded("pay-" + UUID.randomUUID(), new BigDecimal("21.00"), "EUR", "ch_test");
    }

    public static OrderCancelling orderCancelling() {
        return new OrderCancelling("customer changed their mind", "customer");
    }

    public static ShipmentRetryRequested retryRequested() {
        return new ShipmentRetryRequested("operator-1");
    }
}
