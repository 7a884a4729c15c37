package dev.ordersaga.payment.persistence;

import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.SqlParameters;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.payment.domain.Payment;
import dev.ordersaga.payment.domain.PaymentStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

@ApplicationScoped
public class PaymentRepository implements PanacheRepositoryBase<Payment, UUID> {

    /** Namespace of the per-order advisory locks (two-key form: never collides with the relay's one-key lock). */
    public static final int ORDER_LOCK_SPACE = 0x5041594D; // "PAYM"

    @Inject
    TransactionalWrites writes;

    /**
     * Serializes the transactions of one order until the transaction ends. The consumer's handlers need not ask: the
     * inbox claim sent with their first read ({@link #lockByOrderIdForChange}) takes this lock, and this call then
     * costs nothing.
     */
    public void lockOrder(UUID orderId) {
        writes.lockUntilCommit(ORDER_LOCK_SPACE, orderId.hashCode(), () -> "lock order " + orderId);
    }

    /** The columns {@link #stored} reads, in its order. */
    private static final String COLUMNS = """
            id, correlation_id, created_at, status, amount, currency, payment_token, stock_reserved,
            cancel_requested, refund_answered, provider_charge_id, provider_refund_id, decline_reason, attempts,
            next_attempt_at, claimed_until, refund_refused, refund_confirmed_by, refund_confirmation, charging_since,
            caused_by_event_id, updated_at, version""";

    private static final String LOCK_BY_ID = "SELECT " + COLUMNS + ", order_id FROM payment WHERE id = ? FOR NO KEY UPDATE";

    /**
     * The payment, its row locked until the transaction ends, for a provider outcome's change written by {@link #update}
     * rather than by Hibernate's flush: read with plain SQL, so Hibernate neither loads, checks nor writes it. The lock
     * is the one {@link #lockByOrderIdForChange} takes.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Payment> lockForChange(UUID id) {
        TransactionalWrites.Write lock = new TransactionalWrites.Write(LOCK_BY_ID, 1,
                (read, first) -> read.setObject(first, id));
        return writes.readOne(lock, row -> stored(row.getObject(24, UUID.class), row), () -> "lock payment " + id);
    }

    /**
     * Every column but order_id, the key it is read by. FOR NO KEY UPDATE is the lock {@link #lockForChange} takes,
     * the provider outcome's read: the event's change and the outcome's exclude each other.
     */
    private static final String LOCK_BY_ORDER = "SELECT " + COLUMNS + " FROM payment WHERE order_id = ? FOR NO KEY UPDATE";

    /**
     * For an event's change, written by {@link #update} rather than by Hibernate's flush: the order's payment, its row
     * locked until the transaction ends, read with plain SQL in the round trip of the event's inbox claim, which goes
     * first. Each event so costs one round trip fewer than with a claim of its own, and the payment is never managed
     * (Hibernate neither checks it for changes nor writes it). Empty if the order has no payment yet. A duplicate's
     * payment is read all the same: the caller asks the claim ({@link InboxClaim#duplicate()}) before it acts.
     *
     * <p>The claim must take the order's advisory lock ({@link #ORDER_LOCK_SPACE}), as the consumer's does: OrderCreated
     * and StockReserved come on different topics, so two transactions may both find no payment and open one each;
     * under the lock, taken before this read, the second finds the first's row (read committed reads what committed
     * before each statement).
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Payment> lockByOrderIdForChange(UUID orderId, InboxClaim claim) {
        TransactionalWrites.Write lock = new TransactionalWrites.Write(LOCK_BY_ORDER, 1,
                (read, first) -> read.setObject(first, orderId));
        return writes.readAfter(claim, lock, row -> stored(orderId, row), () -> "lock the payment of order " + orderId);
    }

    /**
     * The order's payment, its row locked until the transaction ends, for a change no event brings (an operator's),
     * written by {@link #update}: the lock every change of the row takes.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Payment> lockByOrderIdForChange(UUID orderId) {
        TransactionalWrites.Write lock = new TransactionalWrites.Write(LOCK_BY_ORDER, 1,
                (read, first) -> read.setObject(first, orderId));
        return writes.readOne(lock, row -> stored(orderId, row), () -> "lock the payment of order " + orderId);
    }

    /** A row that begins with {@link #COLUMNS}. */
    private static Payment stored(UUID orderId, ResultSet row) throws SQLException {
        return Payment.stored(row.getObject(1, UUID.class), orderId, row.getString(2), row.getTimestamp(3).toInstant(),
                new Payment.Progress(PaymentStatus.valueOf(row.getString(4)), row.getBigDecimal(5), row.getString(6),
                        row.getString(7), row.getBoolean(8), row.getBoolean(9), row.getBoolean(10), row.getString(11),
                        row.getString(12), row.getString(13), row.getInt(14), SqlParameters.getInstant(row, 15),
                        SqlParameters.getInstant(row, 16), row.getBoolean(17), row.getString(18), row.getString(19),
                        SqlParameters.getInstant(row, 20), row.getObject(21, UUID.class),
                        row.getTimestamp(22).toInstant(), row.getLong(23)));
    }

    private static final String INSERT = """
            INSERT INTO payment (id, order_id, status, amount, currency, payment_token, stock_reserved, cancel_requested,
                                 refund_answered, provider_charge_id, provider_refund_id, decline_reason, attempts,
                                 next_attempt_at, claimed_until, refund_refused, refund_confirmed_by,
                                 refund_confirmation, charging_since, correlation_id, caused_by_event_id, created_at,
                                 updated_at, version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)""";

    private static final String UPDATE = """
            UPDATE payment SET status = ?, amount = ?, currency = ?, payment_token = ?, stock_reserved = ?,
                               cancel_requested = ?, refund_answered = ?, provider_charge_id = ?, provider_refund_id = ?,
                               decline_reason = ?, attempts = ?, next_attempt_at = ?, claimed_until = ?,
                               refund_refused = ?, refund_confirmed_by = ?, refund_confirmation = ?, charging_since = ?,
                               caused_by_event_id = ?, updated_at = ?, version = version + 1
            WHERE id = ? AND version = ?""";

    /**
     * The write that stores a payment opened in this transaction, to send in one round trip with what else the
     * transaction writes. Persisted, it cost Hibernate's persist machinery and a flush of its own.
     */
    public TransactionalWrites.Write insertion(Payment payment) {
        Payment.Progress state = payment.progress();
        if (state.version() != 0) {
            throw new IllegalArgumentException("payment " + payment.id() + " is stored already");
        }
        return new TransactionalWrites.Write(INSERT, 23, (insert, first) -> {
            insert.setObject(first, payment.id());
            insert.setObject(first + 1, payment.orderId());
            setProgress(insert, first + 2, state);
            insert.setString(first + 19, payment.correlationId());
            insert.setObject(first + 20, state.causedByEventId());
            insert.setTimestamp(first + 21, Timestamp.from(payment.createdAt()));
            insert.setTimestamp(first + 22, Timestamp.from(state.updatedAt()));
        });
    }

    /**
     * The write that stores what a transition changed of a payment read with {@link #lockForChange} or
     * {@link #lockByOrderIdForChange}, to send in the round trip of the event it caused; none if nothing changed. The
     * version it was read at must still be the row's (it is: the read locked the row), else the write fails and the
     * transaction rolls back, as Hibernate's optimistic check would.
     */
    public Optional<TransactionalWrites.Write> update(Payment payment, Payment.Progress asRead) {
        Payment.Progress now = payment.progress();
        if (now.equals(asRead)) {
            return Optional.empty();
        }
        return Optional.of(new TransactionalWrites.Write(UPDATE, 21, (update, first) -> {
            setProgress(update, first, now);
            update.setObject(first + 17, now.causedByEventId());
            update.setTimestamp(first + 18, Timestamp.from(now.updatedAt()));
            update.setObject(first + 19, payment.id());
            update.setLong(first + 20, asRead.version());
        }).expecting(1));
    }

    /** The seventeen columns from status to charging_since, in the order INSERT and UPDATE name them. */
    private static void setProgress(PreparedStatement statement, int first, Payment.Progress state) throws SQLException {
        statement.setString(first, state.status().name());
        statement.setBigDecimal(first + 1, state.amount());
        SqlParameters.setString(statement, first + 2, state.currency());
        SqlParameters.setString(statement, first + 3, state.paymentToken());
        statement.setBoolean(first + 4, state.stockReserved());
        statement.setBoolean(first + 5, state.cancelRequested());
        statement.setBoolean(first + 6, state.refundAnswered());
        SqlParameters.setString(statement, first + 7, state.providerChargeId());
        SqlParameters.setString(statement, first + 8, state.providerRefundId());
        SqlParameters.setString(statement, first + 9, state.declineReason());
        statement.setInt(first + 10, state.attempts());
        SqlParameters.setInstant(statement, first + 11, state.nextAttemptAt());
        SqlParameters.setInstant(statement, first + 12, state.claimedUntil());
        statement.setBoolean(first + 13, state.refundRefused());
        SqlParameters.setString(statement, first + 14, state.refundConfirmedBy());
        SqlParameters.setString(statement, first + 15, state.refundConfirmation());
        SqlParameters.setInstant(statement, first + 16, state.chargingSince());
    }

    /**
     * What a provider's news about a payment is checked against, read without a lock; and what the worker checks just
     * before it sends a charge (whether the order is cancelling).
     */
    public record ChargeState(UUID paymentId, UUID orderId, String correlationId, UUID causedByEventId,
                              PaymentStatus status, boolean cancelRequested, BigDecimal amount, String currency,
                              String declineReason) {

        /** {@link Payment#refusalAwaitingStatus} as committed. */
        public Optional<String> refusalAwaitingStatus() {
            return status == PaymentStatus.CHARGING ? Optional.ofNullable(declineReason) : Optional.empty();
        }
    }

    private static final String CHARGE_STATE = """
            SELECT order_id, correlation_id, caused_by_event_id, status, cancel_requested, amount, currency,
                   decline_reason
            FROM payment WHERE id = ?""";

    /**
     * The payment's state as last committed, without a lock and without Hibernate: a provider's news that this state
     * knows already is answered from it, with no row lock, no write and no transaction (one round trip, no commit;
     * {@link TransactionalWrites#readOneCommitted} suspends a caller's transaction itself).
     */
    public Optional<ChargeState> chargeState(UUID id) {
        TransactionalWrites.Write read = new TransactionalWrites.Write(CHARGE_STATE, 1,
                (statement, first) -> statement.setObject(first, id));
        return writes.readOneCommitted(read, row -> new ChargeState(id, row.getObject(1, UUID.class), row.getString(2),
                row.getObject(3, UUID.class), PaymentStatus.valueOf(row.getString(4)), row.getBoolean(5),
                row.getBigDecimal(6), row.getString(7), row.getString(8)),
                () -> "read the charge state of payment " + id);
    }

    public Optional<Payment> findByOrderId(UUID orderId) {
        return find("orderId", orderId).firstResultOptional();
    }

    /**
     * Claims due payments for one worker (a DECLINED one, or one CANCELLED after the provider had no charge, is due
     * while watched for a late settlement): rows another transaction holds are skipped, and a claimed row's
     * {@code next_attempt_at} moves to {@code leaseUntil}, so that no other worker (of this or another replica)
     * takes it before this one has recorded its outcome or the lease ran out (a crashed worker).
     */
    @SuppressWarnings("unchecked")
    public List<UUID> claimDue(Instant now, Instant leaseUntil, int limit) {
        List<UUID> ids = getEntityManager().createNativeQuery("""
                        SELECT id FROM payment
                        WHERE status IN ('CHARGING', 'REFUNDING', 'DECLINED', 'CANCELLED') AND next_attempt_at <= ?1
                        ORDER BY next_attempt_at
                        LIMIT ?2
                        FOR UPDATE SKIP LOCKED""", UUID.class)
                .setParameter(1, now)
                .setParameter(2, limit)
                .getResultList();
        lease(ids, leaseUntil);
        return ids;
    }

    /** Claims one payment if it is due and no other transaction holds it. */
    @SuppressWarnings("unchecked")
    public Optional<UUID> claimIfDue(UUID id, Instant now, Instant leaseUntil) {
        List<UUID> ids = getEntityManager().createNativeQuery("""
                        SELECT id FROM payment
                        WHERE id = ?1 AND status IN ('CHARGING', 'REFUNDING', 'DECLINED', 'CANCELLED') AND next_attempt_at <= ?2
                        FOR UPDATE SKIP LOCKED""", UUID.class)
                .setParameter(1, id)
                .setParameter(2, now)
                .getResultList();
        lease(ids, leaseUntil);
        return ids.stream().findFirst();
    }

    private void lease(List<UUID> ids, Instant leaseUntil) {
        if (ids.isEmpty()) {
            return;
        }
        getEntityManager()
                // the call now made may refund, whatever the last one was answered
                .createNativeQuery("UPDATE payment SET next_attempt_at = ?1, claimed_until = ?1, "
                        + "refund_refused = false WHERE id IN (?2)")
                .setParameter(1, leaseUntil)
                .setParameter(2, ids)
                .executeUpdate();
    }

    /** Of these payments, the ones that recorded a charge, with its id. */
    @SuppressWarnings("unchecked")
    public Map<UUID, String> recordedChargesAmong(Collection<UUID> ids) {
        if (ids.isEmpty()) {
            return Map.of();
        }
        List<Object[]> rows = getEntityManager()
                .createNativeQuery("SELECT id, provider_charge_id FROM payment WHERE id IN (?1) AND provider_charge_id IS NOT NULL")
                .setParameter(1, ids)
                .getResultList();
        Map<UUID, String> charges = new HashMap<>();
        rows.forEach(row -> charges.put((UUID) row[0], (String) row[1]));
        return charges;
    }

    /**
     * Of these payments, the ones that know of no settled charge: charging (held or not: {@link Payment#isHeld()}),
     * declined or cancelled. A settlement the provider reports for one was not heard of.
     */
    @SuppressWarnings("unchecked")
    public List<UUID> notKnownChargedAmong(Collection<UUID> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        return getEntityManager().createNativeQuery("""
                        SELECT id FROM payment
                        WHERE id IN (?1)
                          AND status IN ('CHARGING', 'DECLINED', 'CANCELLED')""",
                        UUID.class)
                .setParameter(1, ids)
                .getResultList();
    }
}
