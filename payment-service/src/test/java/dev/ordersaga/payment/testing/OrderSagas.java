package dev.ordersaga.payment.testing;

import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class's sagas on the real topics, registered with {@code @RegisterExtension static}: the producer the facts go
 * out with and the probe of payment.events are opened before the class's first test and closed after its last. The
 * probe is the class's own, taken from the class's start: what an earlier class left on the topic is not seen, what the
 * class's tests cause is, however early.
 */
public final class OrderSagas implements BeforeAllCallback, AfterAllCallback {

    private KafkaTestProducer producer;
    private KafkaTopicProbe paymentEvents;

    @Override
    public void beforeAll(ExtensionContext context) {
        producer = new KafkaTestProducer();
        paymentEvents = KafkaTopicProbe.fromNow(Topics.PAYMENT_EVENTS);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        // missing where the class's start failed before they were opened
        if (paymentEvents != null) {
            paymentEvents.close();
        }
        if (producer != null) {
            producer.close();
        }
    }

    /** A saga of a new order; {@code name} starts its correlation id. */
    public OrderSaga saga(String name) {
        return new OrderSaga(producer, paymentEvents, name);
    }
}
