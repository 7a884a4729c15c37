package dev.ordersaga.systemtest;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.testing.TestStack;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;

/**
 * Commits an event into a service's outbox the way the service's own transactions do (insert and delete in one
 * transaction), for moments when the service itself is down or has no command that emits it yet.
 */
final class OutboxRows {

    private OutboxRows() {
    }

    static void commit(String database, EventEnvelope<?> envelope) throws SQLException {
        try (Connection c = TestStack.connect(database)) {
            c.setAutoCommit(false);
            try (PreparedStatement insert = c.prepareStatement("""
                    INSERT INTO outbox (id, aggregate_type, aggregate_id, type, payload, correlation_id, causation_id, occurred_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)""");
                 PreparedStatement delete = c.prepareStatement("DELETE FROM outbox WHERE id = ?")) {
                insert.setObject(1, envelope.eventId());
                insert.setString(2, envelope.topic());
                insert.setString(3, envelope.orderId().toString());
                insert.setString(4, envelope.type());
                insert.setString(5, EventCodec.encode(envelope));
                insert.setString(6, envelope.correlationId());
                insert.setString(7, envelope.causationId() == null ? null : envelope.causationId().toString());
                insert.setTimestamp(8, Timestamp.from(envelope.occurredAt()));
                insert.executeUpdate();
                delete.setObject(1, envelope.eventId());
                delete.executeUpdate();
            }
            c.commit();
        }
    }
}
