package dev.ordersaga.shipping.testing;

import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.ShipmentFailed;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import io.quarkus.narayana.jta.QuarkusTransaction;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.awaitility.Awaitility.await;

/**
 * What shipping-service published on shipping.events, per order. Registered with {@code @RegisterExtension static}: the
 * class's own probe, taken from the class's start (what an earlier class left on the topic is not seen, what the class's
 * tests cause is, however early) and closed after its last test.
 */
public final class ShippingEventsProbe implements BeforeAllCallback, AfterAllCallback {

    private KafkaTopicProbe probe;

    @Override
    public void beforeAll(ExtensionContext context) {
        probe = KafkaTopicProbe.fromNow(Topics.SHIPPING_EVENTS);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (probe != null) {
            probe.close();
        }
    }

    public List<EventEnvelope<SagaEvent>> of(UUID orderId) {
        return probe.matching(r -> orderId.toString().equals(r.key())).stream()
                .map(r -> EventCodec.decode(r.value()))
                .toList();
    }

    @SuppressWarnings("unchecked")
    public <E extends SagaEvent> List<EventEnvelope<E>> of(UUID orderId, Class<E> type) {
        return of(orderId).stream()
                .filter(e -> type.isInstance(e.payload()))
                .map(e -> (EventEnvelope<E>) (EventEnvelope<?>) e)
                .toList();
    }

    /** Waits for the first event of the type for the order. */
    public <E extends SagaEvent> EventEnvelope<E> await(UUID orderId, Class<E> type, Duration timeout) {
        return org.awaitility.Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> of(orderId, type), list -> !list.isEmpty()).get(0);
    }

    /**
     * Publishes a marker for the order through the service's outbox, in a transaction of its own, and waits for it by
     * its id. The relay publishes in commit order: whatever a transaction that committed before this one published for
     * the order is on the topic before the marker, so what is missing once it arrived was never published.
     *
     * @return the marker's event id, for {@link #typesBefore}
     */
    public UUID mark(OutboxWriter outbox, UUID orderId, String correlationId, Duration timeout) {
        UUID marker = QuarkusTransaction.requiringNew().call(() -> {
            try (Correlation.Scope ignored = Correlation.open(correlationId, null)) {
                return outbox.publish(orderId, new ShipmentFailed("marker", "marker")).eventId();
            }
        });
        org.awaitility.Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> of(orderId).stream().anyMatch(e -> e.eventId().equals(marker)));
        return marker;
    }

    /** The types published for the order before the marker, in order. */
    public List<String> typesBefore(UUID orderId, UUID marker) {
        List<EventEnvelope<SagaEvent>> events = of(orderId);
        return events.stream().takeWhile(e -> !e.eventId().equals(marker)).map(EventEnvelope::type).toList();
    }

    /**
     * The types the service committed for the order so far, in order: those before a {@link #mark marker}. A copy
     * committed with or after the awaited event is counted, not missed because the list was read as that one arrived.
     */
    public List<String> typesCommittedSoFar(OutboxWriter outbox, UUID orderId, String correlationId, Duration timeout) {
        return typesBefore(orderId, mark(outbox, orderId, correlationId, timeout));
    }

    /** The types, in the order they were published. */
    public List<String> typesOf(UUID orderId) {
        return of(orderId).stream().map(EventEnvelope::type).toList();
    }
}
