package dev.ordersaga.eventing;

import java.sql.SQLException;

/**
 * The inbox claim of the event being applied, for a handler that sends it in the round trip of its first read
 * ({@link EventHandlers#on(Class, EventHandlers.Claiming)}) instead of a round trip of its own before it: one round
 * trip an event fewer. The claim goes first in that round trip, so what the handler reads is still read after it,
 * and after the order's advisory lock when the claim takes one; the handler then asks {@link #duplicate()} before it
 * acts on what it read.
 *
 * <p>The claim answers with one row, whether the event was new ({@code WITH claim AS (INSERT … ON CONFLICT DO NOTHING
 * RETURNING 1) SELECT count(*) FROM claim}), so that it reads like any other statement of the round trip.
 */
public final class InboxClaim {

    private final TransactionalWrites.Write statement;
    private final Object eventId;
    private final Runnable afterSent;
    private Boolean first;

    InboxClaim(TransactionalWrites.Write statement, Object eventId, Runnable afterSent) {
        this.statement = statement;
        this.eventId = eventId;
        this.afterSent = afterSent;
    }

    /** The claim, then the given statements: the round trip of the handler's first read. */
    public TransactionalWrites.Write then(TransactionalWrites.Write read) {
        return statement.then(read);
    }

    /**
     * Takes the claim's answer from the results of a round trip sent with {@link #then}, before the rows of what was
     * sent after it.
     */
    public void answer(TransactionalWrites.Results results) throws SQLException {
        if (first != null) {
            throw new IllegalStateException("the claim was answered already");
        }
        first = results.rows(row -> row.getLong(1)).get(0) == 1L;
        afterSent.run();
    }

    /**
     * @return true if the event was applied before (or by a concurrent transaction that committed meanwhile: the claim
     * waited for it); the handler then acts on nothing
     * @throws IllegalStateException if the claim has not been sent
     */
    public boolean duplicate() {
        if (first == null) {
            throw new IllegalStateException("the inbox claim has not been sent");
        }
        return !first;
    }

    boolean answered() {
        return first != null;
    }

    TransactionalWrites.Write statement() {
        return statement;
    }

    String what() {
        return "record event " + eventId + " in the inbox";
    }
}
