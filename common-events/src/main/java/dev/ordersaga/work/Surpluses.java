package dev.ordersaga.work;

import dev.ordersaga.events.Reasons;
import dev.ordersaga.eventing.Correlation;
import dev.ordersaga.eventing.SqlParameters;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.retry.Backoff;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import org.jboss.logging.Logger;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;

/**
 * What a provider did a second time under one of the service's idempotency keys — a second charge, a second
 * shipment — because it had forgotten the key (real providers keep keys for a day or some days) when a call came
 * again under it, an operator's retry of a step held for long. "Never twice" is the saga's rule, and this breaks it
 * where the service cannot see it until the provider's report shows two effects under one key. Each such effect is
 * recorded once in the service's surplus table (the report's two looks at an entry and replicas reading the same page
 * find it once) and undone — refunded, cancelled — as a compensation is: outside any transaction, under an
 * idempotency key of its own, retried with backoff until the provider takes it, each failure an
 * {@code ALERT compensation failed} and a count of {@code saga.compensation.failures} with the undo's step. The
 * owner (the payment, the shipment) and its saga are not touched.
 *
 * <p>Where the provider's API keeps refusing the undo (a disputed charge, a parcel already handed over), retrying
 * cannot end it: the person who settled it with the provider another way says so ({@link #confirmUndoneByHand}), on
 * the terms an owner's own compensation is confirmed on: the provider's last answer was a refusal, and no call is
 * under way.
 *
 * <p>The table, one per service, has the columns {@code id uuid PRIMARY KEY, provider_ref UNIQUE, owner_id, order_id,
 * correlation_id, undo_ref, attempts, next_attempt_at, claimed_until, undo_refused, found_at, undone_at, undone_by,
 * undo_confirmation}; {@code next_attempt_at} is set while an undo is owed (or claimed, until its lease ends, which
 * {@code claimed_until} keeps) and null once it is done, which {@code undone_at} says. Claims are the provider calls'
 * own ({@link ProviderCalls}): {@code FOR UPDATE SKIP LOCKED} and a lease.
 */
public final class Surpluses {

    private static final Logger LOG = Logger.getLogger(Surpluses.class);

    /** One effect to undo, as its claim read it; {@code claimedUntil} is the claim's lease. */
    public record Surplus(UUID id, String providerRef, UUID ownerId, UUID orderId, String correlationId, int attempts,
                          Instant claimedUntil) {
    }

    /** What the provider answered the undo. */
    public sealed interface Outcome permits Undone, Failed {
    }

    /** @param undoRef the provider's id of the refund or the cancellation, or a word for "nothing left to undo" */
    public record Undone(String undoRef) implements Outcome {
    }

    /**
     * @param refused the provider read the call and refused it (a 4xx but a timeout's or a throttle's), so that no undo
     *                was made under its key; not for a call that went unanswered, which may have undone it
     */
    public record Failed(String reason, boolean refused) implements Outcome {
    }

    /** A surplus as its row stands, for an operator. */
    public record Recorded(String providerRef, String undoRef, int attempts, boolean undoRefused, Instant nextAttemptAt,
                           Instant claimedUntil, Instant foundAt, Instant undoneAt, String undoneBy,
                           String undoConfirmation) {

        /** A claim's call may still be under way: its lease runs, and no outcome was recorded since it was taken. */
        public boolean underWay(Instant now) {
            return claimedUntil != null && claimedUntil.equals(nextAttemptAt) && claimedUntil.isAfter(now);
        }
    }

    /** An undo that an operator's word cannot end now; the message says why. */
    public static final class NotConfirmable extends RuntimeException {

        NotConfirmable(String message) {
            super(message);
        }
    }

    /** The most a confirmation's reason keeps, as the column does. */
    public static final int MAX_CONFIRMATION_LENGTH = 512;

    private final String table;
    private final String what;
    private final TransactionalWrites writes;
    private final Function<Surplus, Outcome> undo;
    private final Duration lease;
    private final Backoff backoff;
    private final Counter undone;
    private final Counter failures;
    private final ProviderCalls<Surplus> calls;

    /**
     * @param table the service's surplus table
     * @param step  the undo's step for {@code saga.compensation.failures} and its threads, e.g. "surplus-refund"
     * @param what  what one undo is, for log lines, e.g. "refund of surplus charge"
     * @param undo  makes the provider call (outside any transaction); may throw, which counts as a failure
     * @param undoneMeter the counter of undone surpluses, e.g. "saga.payment.surplus.refunds"
     */
    public Surpluses(String table, String step, String what, TransactionalWrites writes, Function<Surplus, Outcome> undo,
                     Duration lease, Backoff backoff, MeterRegistry meters, String undoneMeter) {
        this.table = table;
        this.what = what;
        this.writes = writes;
        this.undo = undo;
        this.lease = lease;
        this.backoff = backoff;
        this.undone = Counter.builder(undoneMeter).description("Effects a provider made twice under one key, undone")
                .register(meters);
        this.failures = Counter.builder("saga.compensation.failures")
                .description("Compensations that failed and will be retried")
                .tag("step", step)
                .register(meters);
        // rare work: one thread
        this.calls = new ProviderCalls<>(step, 1, this::claim, this::claimDue, this::run, lease);
    }

    /**
     * Records the provider's effect as a surplus of the owner, once however often the report shows it, and has it
     * undone right after (or by the sweep, should this process stop first).
     *
     * @return whether it was news
     */
    public boolean found(UUID ownerId, UUID orderId, String correlationId, String providerRef) {
        Instant now = Instant.now();
        UUID id = UUID.randomUUID();
        Optional<UUID> recorded = QuarkusTransaction.requiringNew().call(() -> writes.writeAndRead("""
                        INSERT INTO %s (id, provider_ref, owner_id, order_id, correlation_id, attempts, next_attempt_at,
                                        found_at)
                        VALUES (?, ?, ?, ?, ?, 0, ?, ?)
                        ON CONFLICT (provider_ref) DO NOTHING
                        RETURNING id""".formatted(table),
                statement -> {
                    SqlParameters.setUuid(statement, 1, id);
                    SqlParameters.setString(statement, 2, providerRef);
                    SqlParameters.setUuid(statement, 3, ownerId);
                    SqlParameters.setUuid(statement, 4, orderId);
                    SqlParameters.setString(statement, 5, correlationId);
                    SqlParameters.setInstant(statement, 6, now);
                    SqlParameters.setInstant(statement, 7, now);
                },
                row -> row.getObject(1, UUID.class), () -> "record surplus " + providerRef + " of " + ownerId));
        recorded.ifPresent(surplusId -> calls.due(surplusId, now, null));
        return recorded.isPresent();
    }

    private static final String RECORDED_COLUMNS = """
            provider_ref, undo_ref, attempts, undo_refused, next_attempt_at, claimed_until, found_at, undone_at, \
            undone_by, undo_confirmation""";

    /** The surpluses found of an order, oldest first. */
    public List<Recorded> ofOrder(UUID orderId) {
        return QuarkusTransaction.requiringNew().call(() -> writes.read(new TransactionalWrites.Write("""
                        SELECT %s FROM %s WHERE order_id = ? ORDER BY found_at, id"""
                        .formatted(RECORDED_COLUMNS, table),
                        1, (statement, first) -> SqlParameters.setUuid(statement, first, orderId)),
                results -> results.rows(row -> recorded(row, 1)), () -> "read the surpluses of order " + orderId));
    }

    /**
     * Records the undo of an order's surplus as settled outside the provider's API, on an operator's word: the retries
     * and their alerts stop. Only where the provider's last answer was a refusal (no undo was made under its key) and
     * no call may be under way, whose answer decides; the owner and its saga are not touched. Asked again once it
     * holds (an answer lost), it changes nothing.
     *
     * @param undoRef the provider's id of the undo the operator made (its dashboard), null where none was made there
     * @return the surplus as it stands after; empty if the order has none with that provider id
     * @throws NotConfirmable when the undo cannot end on an operator's word now, saying why
     */
    public Optional<Recorded> confirmUndoneByHand(UUID orderId, String providerRef, String undoRef, String operator,
                                                  String reason) {
        String confirmation = Reasons.fit(reason, MAX_CONFIRMATION_LENGTH);
        Optional<Confirmed> confirmed = QuarkusTransaction.requiringNew().call(() -> {
            Instant now = Instant.now();
            Optional<Confirmed> found = writes.readOne(new TransactionalWrites.Write("""
                            SELECT correlation_id, %s FROM %s WHERE order_id = ? AND provider_ref = ? FOR UPDATE"""
                            .formatted(RECORDED_COLUMNS, table), 2, (statement, first) -> {
                        SqlParameters.setUuid(statement, first, orderId);
                        SqlParameters.setString(statement, first + 1, providerRef);
                    }), row -> new Confirmed(recorded(row, 2), row.getString(1), false),
                    () -> "lock surplus " + providerRef + " of order " + orderId);
            if (found.isEmpty()) {
                return found;
            }
            Recorded surplus = found.get().surplus();
            String whose = "the " + what + " " + providerRef + " of order " + orderId + " ";
            if (surplus.undoneAt() != null) {
                if (surplus.undoneBy() == null) {
                    throw new NotConfirmable(whose + "was made by the provider (" + surplus.undoRef() + ")");
                }
                if (!Objects.equals(undoRef, surplus.undoRef())) {
                    throw new NotConfirmable(whose + "was confirmed by hand as " + named(surplus.undoRef()) + ", not "
                            + named(undoRef));
                }
                return found;
            }
            if (surplus.underWay(now)) {
                throw new NotConfirmable(whose + "has a call to the provider under way until " + surplus.claimedUntil()
                        + ", whose answer decides");
            }
            if (!surplus.undoRefused()) {
                throw new NotConfirmable(whose + "has had no call refused by the provider yet (none answered, or none "
                        + "made: it may have been made): the provider is asked first");
            }
            return writes.writeAndRead("""
                            UPDATE %s SET undo_ref = ?, undone_at = ?, next_attempt_at = NULL, undone_by = ?,
                                          undo_confirmation = ?
                            WHERE order_id = ? AND provider_ref = ?
                            RETURNING correlation_id, %s""".formatted(table, RECORDED_COLUMNS),
                    statement -> {
                        SqlParameters.setString(statement, 1, undoRef);
                        SqlParameters.setInstant(statement, 2, now);
                        SqlParameters.setString(statement, 3, operator);
                        SqlParameters.setString(statement, 4, confirmation);
                        SqlParameters.setUuid(statement, 5, orderId);
                        SqlParameters.setString(statement, 6, providerRef);
                    }, row -> new Confirmed(recorded(row, 2), row.getString(1), true),
                    () -> "confirm surplus " + providerRef + " undone by hand");
        });
        confirmed.filter(Confirmed::madeNow).ifPresent(done -> {
            try (Correlation.Scope ignored = Correlation.open(done.correlationId(), null)) {
                // the order is not touched, and the undo's alerts stop on this word: a person checks it
                LOG.warnf("Done by hand: %s %s of order %s confirmed by operator %s after %d refused attempt(s), as "
                        + "%s: %s", what, providerRef, orderId, operator, done.surplus().attempts(), named(undoRef),
                        confirmation);
            }
        });
        return confirmed.map(Confirmed::surplus);
    }

    private record Confirmed(Recorded surplus, String correlationId, boolean madeNow) {
    }

    private static String named(String undoRef) {
        return undoRef == null ? "settled outside the provider" : undoRef;
    }

    private static Recorded recorded(ResultSet row, int first) throws SQLException {
        int i = first;
        return new Recorded(row.getString(i++), row.getString(i++), row.getInt(i++), row.getBoolean(i++),
                SqlParameters.getInstant(row, i++), SqlParameters.getInstant(row, i++),
                SqlParameters.getInstant(row, i++), SqlParameters.getInstant(row, i++), row.getString(i++),
                row.getString(i));
    }

    /** Claims what is owed and was not taken: a wake-up a stop or crash lost, an undo due again after a failure. */
    public void sweep(int limit) {
        calls.sweep(limit);
    }

    /** No new calls; one under way may finish. */
    public void stop() {
        calls.stop();
    }

    private static final String CLAIM = """
            UPDATE %s s SET next_attempt_at = ?, claimed_until = ?, undo_refused = false
            FROM (SELECT id FROM %1$s
                  WHERE next_attempt_at <= ? %s
                  ORDER BY next_attempt_at
                  LIMIT ?
                  FOR UPDATE SKIP LOCKED) due
            WHERE s.id = due.id
            RETURNING s.id, s.provider_ref, s.owner_id, s.order_id, s.correlation_id, s.attempts, s.next_attempt_at""";

    private Optional<Surplus> claim(UUID id) {
        return claim("AND id = ?", id, 1).stream().findFirst();
    }

    private List<Surplus> claimDue(int limit) {
        return claim("", null, limit);
    }

    private List<Surplus> claim(String condition, UUID id, int limit) {
        Instant now = Instant.now();
        Instant leaseUntil = now.plus(lease);
        TransactionalWrites.Write claim = new TransactionalWrites.Write(CLAIM.formatted(table, condition),
                id == null ? 4 : 5, (statement, first) -> {
            int i = first;
            SqlParameters.setInstant(statement, i++, leaseUntil);
            SqlParameters.setInstant(statement, i++, leaseUntil);
            SqlParameters.setInstant(statement, i++, now);
            if (id != null) {
                SqlParameters.setUuid(statement, i++, id);
            }
            statement.setInt(i, limit);
        });
        return QuarkusTransaction.requiringNew().call(() -> writes.read(claim,
                results -> results.rows(Surpluses::claimed), () -> "claim the due rows of " + table));
    }

    private static Surplus claimed(ResultSet row) throws SQLException {
        return new Surplus(row.getObject(1, UUID.class), row.getString(2), row.getObject(3, UUID.class),
                row.getObject(4, UUID.class), row.getString(5), row.getInt(6), SqlParameters.getInstant(row, 7));
    }

    private void run(Surplus surplus) {
        try (Correlation.Scope ignored = Correlation.open(surplus.correlationId(), null)) {
            try {
                Outcome outcome = undo.apply(surplus);
                if (outcome instanceof Undone done) {
                    recordUndone(surplus, done.undoRef());
                } else if (outcome instanceof Failed failed) {
                    failed(surplus, failed.reason(), failed.refused(), null);
                }
            } catch (RuntimeException e) {
                // a compensation that keeps failing alerts whatever the cause, an error of ours included
                failed(surplus, String.valueOf(e.getMessage()), false, e);
            }
        }
    }

    /**
     * Recorded even if the claim ran out meanwhile: the undo is the provider's fact, and a repeat under its key is too.
     * One an operator confirmed by hand meanwhile (a call that outlived its lease) is an ALERT: undone twice, unless
     * it is the undo they named.
     */
    private void recordUndone(Surplus surplus, String undoRef) {
        Recording recording = QuarkusTransaction.requiringNew().call(() -> {
            int recorded = writes.write("""
                            UPDATE %s SET undo_ref = ?, undone_at = ?, next_attempt_at = NULL
                            WHERE id = ? AND undone_at IS NULL""".formatted(table),
                    statement -> {
                        SqlParameters.setString(statement, 1, undoRef);
                        SqlParameters.setInstant(statement, 2, Instant.now());
                        SqlParameters.setUuid(statement, 3, surplus.id());
                    }, () -> "record the undo of surplus " + surplus.providerRef());
            return new Recording(recorded == 1, recorded == 1 ? null : writes.writeAndRead("""
                            SELECT undone_by FROM %s
                            WHERE id = ? AND undone_by IS NOT NULL AND undo_ref IS DISTINCT FROM ?""".formatted(table),
                    statement -> {
                        SqlParameters.setUuid(statement, 1, surplus.id());
                        SqlParameters.setString(statement, 2, undoRef);
                    }, row -> row.getString(1), () -> "read the confirmation of surplus " + surplus.providerRef())
                    .orElse(null));
        });
        if (recording.recorded()) {
            undone.increment();
            LOG.warnf("Done: %s %s of order %s (%s)", what, surplus.providerRef(), surplus.orderId(), undoRef);
        } else if (recording.confirmedByHandBy() != null) {
            LOG.errorf("ALERT effect undone twice: %s %s of order %s was made by the provider (%s) after operator %s "
                    + "had confirmed it settled by hand", what, surplus.providerRef(), surplus.orderId(), undoRef,
                    recording.confirmedByHandBy());
        }
    }

    /**
     * @param confirmedByHandBy the operator who had confirmed the undo settled by hand, where the provider's undo is
     *                          not one they named
     */
    private record Recording(boolean recorded, String confirmedByHandBy) {
    }

    /**
     * Tried again after a backoff; not recorded if the claim ran out and another took the row (its call is under way)
     * or the undo was recorded meanwhile.
     */
    private void failed(Surplus surplus, String reason, boolean refused, RuntimeException cause) {
        Instant retryAt = Instant.now().plus(backoff.delayAfter(surplus.attempts() + 1));
        int attempt;
        try {
            attempt = QuarkusTransaction.requiringNew().call(() -> writes.writeAndRead("""
                            UPDATE %s SET attempts = attempts + 1, next_attempt_at = ?, undo_refused = ?
                            WHERE id = ? AND next_attempt_at = ? AND undone_at IS NULL
                            RETURNING attempts""".formatted(table),
                    statement -> {
                        SqlParameters.setInstant(statement, 1, retryAt);
                        statement.setBoolean(2, refused);
                        SqlParameters.setUuid(statement, 3, surplus.id());
                        SqlParameters.setInstant(statement, 4, surplus.claimedUntil());
                    }, row -> row.getInt(1), () -> "record a failed undo of surplus " + surplus.providerRef()))
                    .orElse(0);
        } catch (RuntimeException e) {
            attempt = -1; // not recorded: the lease runs out and the sweep claims it again
        }
        if (attempt == 0) {
            return;
        }
        if (attempt > 0) {
            calls.due(surplus.id(), retryAt, null);
        }
        failures.increment();
        LOG.errorf(cause,
                "ALERT compensation failed: %s %s of order %s%s: %s; retrying with backoff until it succeeds%s",
                what, surplus.providerRef(), surplus.orderId(), attempt > 0 ? " attempt " + attempt : "", reason,
                refused ? " or an operator confirms it settled with the provider by hand" : "");
    }
}
