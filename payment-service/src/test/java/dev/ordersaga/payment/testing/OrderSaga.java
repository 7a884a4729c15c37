package dev.ordersaga.payment.testing;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.testing.KafkaTestProducer;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.TestSaga;
import io.quarkus.narayana.jta.QuarkusTransaction;
import org.awaitility.Awaitility;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/** One order's saga as payment-service sees it: facts put on their topics, and what payment published. */
public final class OrderSaga {

    private final TestSaga saga;
    private final KafkaTopicProbe paymentEvents;
    private final Set<UUID> markers = ConcurrentHashMap.newKeySet();

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

    /**
     * Commits a marker for the order through the service's outbox, in a transaction of its own: a PaymentFailed, which
     * nothing in the service consumes. The relay publishes in commit order, so what was committed before it is on the
     * topic before it.
     *
     * @return the marker's event id
     */
    public UUID publishMarker(OutboxWriter outbox) {
        return QuarkusTransaction.requiringNew().call(() -> {
            try (Correlation.Scope ignored = Correlation.open(correlationId(), null)) {
                return outbox.publish(orderId(), new PaymentFailed("marker", "marker")).eventId();
            }
        });
    }

    /** What payment-service published for this order so far, in order, the markers it awaited left out. */
    public List<EventEnvelope<SagaEvent>> published() {
        return paymentEvents.matching(r -> orderId().toString().equals(r.key())).stream()
                .<EventEnvelope<SagaEvent>>map(r -> EventCodec.decode(r.value()))
                .filter(e -> !markers.contains(e.eventId())).toList();
    }

    /**
     * Publishes a marker for the order through the service's outbox, in a transaction of its own, and waits for it.
     * The relay publishes in commit order, so whatever the service committed for the order before it is then in
     * {@link #published()}: a count read after this one is not a count of what happened to have arrived. The marker
     * ({@link #publishMarker}) is left out of {@link #published()}.
     */
    public void awaitCommittedSoFar(OutboxWriter outbox, Duration timeout) {
        UUID marker = publishMarker(outbox);
        markers.add(marker);
        Awaitility.await("the marker " + marker).atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> !paymentEvents.matching(r -> r.value().contains(marker.toString())).isEmpty());
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
