package dev.ordersaga.work;

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
 * <p>The table, one per service, has the columns {@code id uuid PRIMARY KEY, provider_ref UNIQUE, owner_id, order_id,
 * correlation_id, undo_ref, attempts, next_attempt_at, found_at, undone_at}; {@code next_attempt_at} is set while an
 * undo is owed (or claimed, until its lease ends) and null once it is done. Claims are the provider calls' own
 * ({@link ProviderCalls}): {@code FOR UPDATE SKIP LOCKED} and a lease.
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

    public record Failed(String reason) implements Outcome {
    }

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

    /** Claims what is owed and was not taken: a wake-up a stop or crash lost, an undo due again after a failure. */
    public void sweep(int limit) {
        calls.sweep(limit);
    }

    /** No new calls; one under way may finish. */
    public void stop() {
        calls.stop();
    }

    private static final String CLAIM = """
            UPDATE %s s SET next_attempt_at = ?
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
                id == null ? 3 : 4, (statement, first) -> {
            int i = first;
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
                    failed(surplus, failed.reason(), null);
                }
            } catch (RuntimeException e) {
                // a compensation that keeps failing alerts whatever the cause, an error of ours included
                failed(surplus, String.valueOf(e.getMessage()), e);
            }
        }
    }

    /** Recorded even if the claim ran out meanwhile: the undo is the provider's fact, and a repeat under its key is too. */
    private void recordUndone(Surplus surplus, String undoRef) {
        boolean recorded = QuarkusTransaction.requiringNew().call(() -> writes.write("""
                        UPDATE %s SET undo_ref = ?, undone_at = ?, next_attempt_at = NULL
                        WHERE id = ? AND undo_ref IS NULL""".formatted(table),
                statement -> {
                    SqlParameters.setString(statement, 1, undoRef);
                    SqlParameters.setInstant(statement, 2, Instant.now());
                    SqlParameters.setUuid(statement, 3, surplus.id());
                }, () -> "record the undo of surplus " + surplus.providerRef()) == 1);
        if (recorded) {
            undone.increment();
            LOG.warnf("Done: %s %s of order %s (%s)", what, surplus.providerRef(), surplus.orderId(), undoRef);
        }
    }

    /**
     * Tried again after a backoff; not recorded if the claim ran out and another took the row (its call is under way)
     * or the undo was recorded meanwhile.
     */
    private void failed(Surplus surplus, String reason, RuntimeException cause) {
        Instant retryAt = Instant.now().plus(backoff.delayAfter(surplus.attempts() + 1));
        int attempt;
        try {
            attempt = QuarkusTransaction.requiringNew().call(() -> writes.writeAndRead("""
                            UPDATE %s SET attempts = attempts + 1, next_attempt_at = ?
                            WHERE id = ? AND next_attempt_at = ? AND undo_ref IS NULL
                            RETURNING attempts""".formatted(table),
                    statement -> {
                        SqlParameters.setInstant(statement, 1, retryAt);
                        SqlParameters.setUuid(statement, 2, surplus.id());
                        SqlParameters.setInstant(statement, 3, surplus.claimedUntil());
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
        LOG.errorf(cause, "ALERT compensation failed: %s %s of order %s%s: %s; retrying with backoff until it succeeds",
                what, surplus.providerRef(), surplus.orderId(), attempt > 0 ? " attempt " + attempt : "", reason);
    }
}
