package dev.ordersaga.eventing;

import dev.ordersaga.events.EventEnvelope;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.OptionalInt;

/**
 * The ids of the events this service has applied. Claiming an id happens in the handler's transaction: if the
 * handler rolls back, so does the claim, and the redelivered event is applied then.
 */
@ApplicationScoped
public class Inbox {

    /** Answers with one row: 1 if the event is new, 0 if its id was claimed before. */
    private static final String CLAIM = """
            WITH claim AS (
                INSERT INTO inbox (event_id, event_type, topic, order_id, correlation_id, received_at)
                VALUES (?, ?, ?, ?, ?, now())
                ON CONFLICT (event_id) DO NOTHING RETURNING 1)
            SELECT count(*) FROM claim""";

    /**
     * The claim under the order's advisory lock, taken first: the lock waits for any transaction of this service that
     * works on the same order, and what the handler then reads is read after it committed (read committed reads what
     * committed before each statement, and the handler's statements come after this one).
     */
    private static final String CLAIM_UNDER_ORDER_LOCK = """
            WITH locked AS (SELECT pg_advisory_xact_lock(?, ?)),
                 claim AS (
                     INSERT INTO inbox (event_id, event_type, topic, order_id, correlation_id, received_at)
                     SELECT ?, ?, ?, ?, ?, now() FROM locked
                     ON CONFLICT (event_id) DO NOTHING RETURNING 1)
            SELECT count(*) FROM claim""";

    @Inject
    TransactionalWrites writes;

    /**
     * The claim of an event, not yet sent: {@link #send} sends it alone, a handler sends it with its first read
     * ({@link InboxClaim#then}). With a lock space, the claim takes the order's advisory lock in that space
     * ({@link TransactionalWrites#lockUntilCommit}, key: the order id's hash) in the same statement, held until the
     * transaction ends: a handler that locks its order first thing then costs no round trip of its own for it.
     */
    public InboxClaim claimOf(EventEnvelope<?> envelope, String topic, OptionalInt orderLockSpace) {
        if (orderLockSpace.isEmpty()) {
            return new InboxClaim(new TransactionalWrites.Write(CLAIM, 5,
                    (claim, first) -> setClaim(claim, first, envelope, topic)), envelope.eventId(), () -> {
            });
        }
        int space = orderLockSpace.getAsInt();
        int key = envelope.orderId().hashCode();
        return new InboxClaim(new TransactionalWrites.Write(CLAIM_UNDER_ORDER_LOCK, 7, (claim, first) -> {
            claim.setInt(first, space);
            claim.setInt(first + 1, key);
            setClaim(claim, first + 2, envelope, topic);
        }), envelope.eventId(), () -> writes.noteHeldUntilCommit(space, key));
    }

    /**
     * Sends the claim in a round trip of its own.
     *
     * @return true if this is the first delivery of the event; false if it was applied before (or is being applied
     * by a concurrent transaction that then commits: the insert waits for it)
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean send(InboxClaim claim) {
        writes.read(claim.statement(), results -> {
            claim.answer(results);
            return null;
        }, claim::what);
        return !claim.duplicate();
    }

    /** {@link #send} of the event's claim under its order's advisory lock in the given space. */
    @Transactional(Transactional.TxType.MANDATORY)
    public boolean claimUnderOrderLock(EventEnvelope<?> envelope, String topic, int lockSpace) {
        return send(claimOf(envelope, topic, OptionalInt.of(lockSpace)));
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
