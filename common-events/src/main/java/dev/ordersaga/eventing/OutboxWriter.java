package dev.ordersaga.eventing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.util.UUID;
import java.util.function.Function;

/**
 * Writes an event into the caller's transaction, so that the state change and its event commit or roll back
 * together. The CDC relay streams the row from the write-ahead log; the row itself is deleted in the same
 * transaction, so the table never grows (logical decoding still sees the insert, and the publication carries
 * inserts only).
 */
@ApplicationScoped
public class OutboxWriter {

    /**
     * Two statements in one: the driver sends both and waits for the server once. A single statement could not do
     * it: a data-modifying CTE's DELETE does not see the rows its sibling INSERT adds.
     */
    private static final String INSERT_THEN_DELETE = """
            INSERT INTO outbox (id, aggregate_type, aggregate_id, type, payload, correlation_id, causation_id, occurred_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?);
            DELETE FROM outbox WHERE id = ?""";

    /**
     * Kafka's limit on a record (the producer's {@code max.request.size} and the broker's {@code message.max.bytes},
     * both about 1 MiB by default) less room for the key, the headers and the batch's own framing.
     */
    static final int MAX_EVENT_BYTES = 900 * 1024;

    @Inject
    TransactionalWrites writes;

    /**
     * @throws jakarta.transaction.TransactionalException if there is no transaction: an event without its state
     *                                                    change is a dual write
     * @throws IllegalStateException                      if no {@link Correlation} scope is open
     * @throws EventTooLargeException                     if the encoded event is more than Kafka takes
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public <E extends SagaEvent> EventEnvelope<E> publish(UUID orderId, E event) {
        return publish(orderId, event, null);
    }

    /**
     * As {@link #publish(UUID, SagaEvent)}, and sends the writes {@code alongside} makes of the envelope (say, a
     * timeline entry that names the event) in the same round trip as the outbox row.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public <E extends SagaEvent> EventEnvelope<E> publish(UUID orderId, E event,
                                                          Function<EventEnvelope<E>, TransactionalWrites.Write> alongside) {
        Correlation.Context context = Correlation.current()
                .orElseThrow(() -> new IllegalStateException("no correlation scope open for " + event.getClass().getSimpleName()));
        EventEnvelope<E> envelope = EventEnvelope.of(orderId, context.correlationId(), context.causationId(), event);
        String payload = EventCodec.encode(envelope);
        // a UTF-8 character takes at most 3 bytes for each char: only a long payload is counted exactly
        if (payload.length() * 3L > MAX_EVENT_BYTES) {
            int bytes = payload.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_EVENT_BYTES) {
                throw new EventTooLargeException(envelope.type() + " for order " + orderId + " is " + bytes
                        + " bytes encoded, more than Kafka takes (" + MAX_EVENT_BYTES + ")");
            }
        }
        TransactionalWrites.Write write = new TransactionalWrites.Write(INSERT_THEN_DELETE, 9, (statement, first) -> {
            statement.setObject(first, envelope.eventId());
            statement.setString(first + 1, envelope.topic());
            statement.setString(first + 2, orderId.toString());
            statement.setString(first + 3, envelope.type());
            statement.setString(first + 4, payload);
            statement.setString(first + 5, envelope.correlationId());
            SqlParameters.setString(statement, first + 6,
                    envelope.causationId() == null ? null : envelope.causationId().toString());
            statement.setTimestamp(first + 7, Timestamp.from(envelope.occurredAt()));
            statement.setObject(first + 8, envelope.eventId());
        });
        if (alongside != null) {
            write = write.then(alongside.apply(envelope));
        }
        writes.write(write, () -> "write " + envelope.type() + " for order " + orderId);
        return envelope;
    }
}
