package dev.ordersaga.payment.testing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.TestSaga;

import java.util.List;
import java.util.UUID;

/** One order's saga as payment-service sees it: facts put on their topics, and what payment published. */
public final class OrderSaga {

    private final TestSaga saga;
    private final KafkaTopicProbe paymentEvents;

    public OrderSaga(KafkaTestProducer producer, KafkaTopicProbe paymentEvents, String name) {
        this.saga = new TestSaga(producer, name);
        this.paymentEvents = paymentEvents;
    }

    public UUID orderId() {
        return saga.orderId();
    }

    public String correlationId() {
        return saga.correlationId();
    }

    /** The fact as this saga would publish it, not published: for a test that delivers it itself. */
    public <E extends SagaEvent> EventEnvelope<E> envelope(E event) {
        return saga.envelope(event);
    }

    public <E extends SagaEvent> EventEnvelope<E> publish(E event) {
        return saga.publish(event);
    }

    /** Puts the very same event (same id) on its topic again: an at-least-once duplicate. */
    public void redeliver(EventEnvelope<?> envelope) {
        saga.publish(envelope);
    }

    /** What payment-service published for this order so far, in order. */
    public List<EventEnvelope<SagaEvent>> published() {
        return paymentEvents.matching(r -> orderId().toString().equals(r.key())).stream()
                .map(r -> EventCodec.decode(r.value())).toList();
    }

    public List<String> publishedTypes() {
        return published().stream().map(EventEnvelope::type).toList();
    }

    @SuppressWarnings("unchecked")
    public <E extends SagaEvent> List<EventEnvelope<E>> published(Class<E> type) {
        return published().stream().filter(e -> type.isInstance(e.payload())).map(e -> (EventEnvelope<E>) (EventEnvelope<?>) e)
                .toList();
    }
}
