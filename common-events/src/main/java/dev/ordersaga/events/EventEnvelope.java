package dev.ordersaga.events;

import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * What travels on a topic: the identity and lineage of one event, and the event itself.
 *
 * @param eventId       unique per event; consumers deduplicate on it
 * @param type          wire name of the payload, see {@link EventTypes}
 * @param version       schema version of the payload
 * @param orderId       the saga this event belongs to; also the Kafka key
 * @param correlationId the same for every event of one saga, from the HTTP request on
 * @param causationId   id of the event that caused this one; null for the first event of a saga
 */
public record EventEnvelope<E extends SagaEvent>(UUID eventId, String type, int version, Instant occurredAt,
                                                 UUID orderId, String correlationId, UUID causationId, E payload) {

    public EventEnvelope {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(occurredAt, "occurredAt");
        Objects.requireNonNull(orderId, "orderId");
        Objects.requireNonNull(correlationId, "correlationId");
        Objects.requireNonNull(payload, "payload");
    }

    public static <E extends SagaEvent> EventEnvelope<E> of(UUID orderId, String correlationId, UUID causationId, E payload) {
        return new EventEnvelope<>(Ids.timeOrdered(), EventTypes.nameOf(payload), EventTypes.CURRENT_VERSION,
                Instant.now(), orderId, correlationId, causationId, payload);
    }

    public String topic() {
        return Topics.of(payload);
    }
}
