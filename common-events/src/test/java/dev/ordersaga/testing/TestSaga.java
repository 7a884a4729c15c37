package dev.ordersaga.testing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;

import java.util.UUID;

/**
 * One saga as the other services would drive it: a new order id, a correlation id, and facts put on their
 * producers' topics keyed by the order, as those producers' relays would.
 */
public final class TestSaga {

    private final KafkaTestProducer producer;
    private final UUID orderId = UUID.randomUUID();
    private final String correlationId;

    /** @param name starts the correlation id, so that a test's sagas are easy to find in the logs */
    public TestSaga(KafkaTestProducer producer, String name) {
        this.producer = producer;
        this.correlationId = name + "-" + orderId;
    }

    public UUID orderId() {
        return orderId;
    }

    public String correlationId() {
        return correlationId;
    }

    public <E extends SagaEvent> EventEnvelope<E> envelope(E event) {
        return EventEnvelope.of(orderId, correlationId, null, event);
    }

    /** Publishes the fact on its topic and waits for the broker's acknowledgement. */
    public <E extends SagaEvent> EventEnvelope<E> publish(E event) {
        return publish(envelope(event));
    }

    /** Publishes this very envelope: the same event id a second time is an at-least-once duplicate. */
    public <E extends SagaEvent> EventEnvelope<E> publish(EventEnvelope<E> envelope) {
        producer.send(envelope.topic(), orderId.toString(), EventCodec.encode(envelope));
        return envelope;
    }
}
