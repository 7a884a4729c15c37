package dev.ordersaga.eventing;

import dev.ordersaga.events.EventEnvelope;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The ids of the events this service has applied. Claiming an id happens in the handler's transaction: if the
 * handler rolls back, so does the claim, and the redelivered event is applied then.
 */
@ApplicationScoped
public class Inbox {

    private static final String CLAIM = """
            INSERT INTO inbox (event_id, event_type, topic, order_id, correlation_id, received_at)
            VALUES (?, ?, ?, ?, ?, now())
            ON CONFLICT (event_id) DO NOTHING""";

    /**
     * The claim under the order's advisory lock, taken first: the lock waits for any transaction of this service that
     * works on the same order, and what the handler then reads is read after it committed (read committed reads what
     * committed before each statement, and the handler's statements come after this one).
     */
    private static final String CLAIM_UNDER_ORDER_LOCK = """
            WITH locked AS (SELECT pg_advisory_xact_lock(?, ?))
            INSERT INTO inbox (event_id, event_type, topic, order_id, correlation_id, received_at)
            SELECT ?, ?, ?, ?, ?, now() FROM locked
            ON CONFLICT (event_id) DO NOTHING""";

    @Inject
    TransactionalWrites writes;

    /**
     * @return true if this is the first delivery of the event; false if it was applied before (or is being applied
     * by a concurrent transaction that then commits: the insert waits for it)
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean claim(EventEnvelope<?> envelope, String topic) {
        return writes.write(CLAIM, claim -> setClaim(claim, 1, envelope, topic),
                () -> "record event " + envelope.eventId() + " in the inbox") == 1;
    }

    /**
     * As {@link #claim(EventEnvelope, String)}, in the same statement as taking the order's advisory lock in the given
     * space ({@link TransactionalWrites#lockUntilCommit}, key: the order id's hash), held until the transaction ends.
     * A handler that locks its order first thing then costs no round trip of its own for it.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean claimUnderOrderLock(EventEnvelope<?> envelope, String topic, int lockSpace) {
        int key = envelope.orderId().hashCode();
        boolean first = writes.write(CLAIM_UNDER_ORDER_LOCK, claim -> {
            claim.setInt(1, lockSpace);
            claim.setInt(2, key);
            setClaim(claim, 3, envelope, topic);
        }, () -> "record event " + envelope.eventId() + " in the inbox") == 1;
        writes.noteHeldUntilCommit(lockSpace, key);
        return first;
    }

    private static void setClaim(PreparedStatement claim, int first, EventEnvelope<?> envelope, String topic)
            throws SQLException {
        claim.setObject(first, envelope.eventId());
        claim.setString(first + 1, envelope.type());
        claim.setString(first + 2, topic);
        claim.setObject(first + 3, envelope.orderId());
        claim.setString(first + 4, envelope.correlationId());
    }
}
