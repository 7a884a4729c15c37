package dev.ordersaga.shipping.persistence;

import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.SqlParameters;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.shipping.domain.Address;
import dev.ordersaga.shipping.domain.Shipment;
import dev.ordersaga.shipping.domain.ShipmentStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

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
public class ShipmentRepository implements PanacheRepositoryBase<Shipment, UUID> {

    /** Namespace of this service's per-order advisory locks (the two-key form: apart from the relay's one-key lock). */
    public static final int ORDER_LOCK_SPACE = 0x5348_4950; // "SHIP"

    private static final String DUE = """
            SELECT * FROM shipment
            WHERE status IN ('REQUESTED', 'CANCELLING') AND next_attempt_at <= :now
              AND (claimed_until IS NULL OR claimed_until <= :now)
            ORDER BY next_attempt_at
            LIMIT :limit
            FOR UPDATE SKIP LOCKED""";

    private static final String BY_ID_SKIP_LOCKED = "SELECT * FROM shipment WHERE id = :id FOR UPDATE SKIP LOCKED";

    @Inject
    TransactionalWrites writes;

    public Optional<Shipment> findByOrderId(UUID orderId) {
        return find("orderId", orderId).firstResultOptional();
    }

    /**
     * Every column of a shipment but its order id (the caller has it), in the order {@link #stored} reads them. At most
     * one row: the order id is unique. Locked as Hibernate's PESSIMISTIC_WRITE read locks it on PostgreSQL.
     */
    private static final String COLUMNS = """
            id, correlation_id, created_at, status, ship_name, ship_line1, ship_line2, ship_city,
            ship_postal_code, ship_country, paid, cancel_requested, creation_uncertain, attempts,
            cancel_attempts, next_attempt_at, claimed_until, carrier_shipment_id, last_error,
            caused_by_event_id, cancel_caused_by_event_id, updated_at, version, cancel_refused""";

    private static final String LOCK_BY_ORDER_ID = "SELECT " + COLUMNS + " FROM shipment WHERE order_id = ? FOR NO KEY UPDATE";

    /** As {@link #LOCK_BY_ORDER_ID}, by the shipment's id, with its order id after the other columns. */
    private static final String LOCK_BY_ID = "SELECT " + COLUMNS + ", order_id FROM shipment WHERE id = ? FOR NO KEY UPDATE";

    /**
     * The shipment of an order, locked until the transaction ends, for an event's change written by {@link #update}:
     * read with plain SQL in the round trip of the event's inbox claim, which goes first (and takes the order's
     * advisory lock, for the consumer's handlers: the read sees what the transaction that held it before wrote).
     * Through Hibernate, the claim and the read were a round trip each. The shipment is never managed, so Hibernate
     * neither checks it for changes nor writes it (nor, in a later event of the same transaction, hands out a stale
     * copy of a row {@link #update} wrote).
     *
     * @return empty if the order has no shipment, and for a duplicate, which the caller must ask the claim about
     * before it acts
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Shipment> lockByOrderIdForChange(UUID orderId, InboxClaim claim) {
        TransactionalWrites.Write lock = new TransactionalWrites.Write(LOCK_BY_ORDER_ID, 1,
                (read, first) -> read.setObject(first, orderId));
        return writes.readAfter(claim, lock, row -> stored(orderId, row), () -> "lock the shipment of order " + orderId);
    }

    private static Shipment stored(UUID orderId, ResultSet row) throws SQLException {
        Address address = address(row.getString(5), row.getString(6), row.getString(7), row.getString(8),
                row.getString(9), row.getString(10));
        return Shipment.stored(row.getObject(1, UUID.class), orderId, row.getString(2), row.getTimestamp(3).toInstant(),
                new Shipment.Progress(ShipmentStatus.valueOf(row.getString(4)), address, row.getBoolean(11),
                        row.getBoolean(12), row.getBoolean(13), row.getInt(14), row.getInt(15), row.getBoolean(24),
                        SqlParameters.getInstant(row, 16), SqlParameters.getInstant(row, 17), row.getString(18),
                        row.getString(19), row.getObject(20, UUID.class), row.getObject(21, UUID.class),
                        row.getTimestamp(22).toInstant(), row.getLong(23)));
    }

    /** As Hibernate reads an embedded value: none if every column of it is null (before OrderCreated was heard). */
    private static Address address(String name, String line1, String line2, String city, String postalCode,
                                   String country) {
        if (name == null && line1 == null && line2 == null && city == null && postalCode == null && country == null) {
            return null;
        }
        return new Address(name, line1, line2, city, postalCode, country);
    }

    /**
     * The shipment, locked until the transaction ends, for a carrier outcome's change written by {@link #update}
     * (waits for another transaction that holds it): read with plain SQL, so that Hibernate neither loads, checks
     * nor writes it.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Shipment> lockByIdForChange(UUID id) {
        TransactionalWrites.Write lock = new TransactionalWrites.Write(LOCK_BY_ID, 1,
                (read, first) -> read.setObject(first, id));
        return writes.readOne(lock, row -> stored(row.getObject(25, UUID.class), row), () -> "lock shipment " + id);
    }

    // both bind the columns a step may change through setProgress: in the same order in each
    private static final String INSERT = """
            INSERT INTO shipment (id, order_id, correlation_id, created_at,
                                  status, paid, cancel_requested, creation_uncertain, ship_name, ship_line1, ship_line2,
                                  ship_city, ship_postal_code, ship_country, attempts, cancel_attempts, next_attempt_at,
                                  claimed_until, carrier_shipment_id, last_error, caused_by_event_id,
                                  cancel_caused_by_event_id, updated_at, cancel_refused, version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)""";

    private static final String UPDATE = """
            UPDATE shipment SET status = ?, paid = ?, cancel_requested = ?, creation_uncertain = ?, ship_name = ?,
                                ship_line1 = ?, ship_line2 = ?, ship_city = ?, ship_postal_code = ?, ship_country = ?,
                                attempts = ?, cancel_attempts = ?, next_attempt_at = ?, claimed_until = ?,
                                carrier_shipment_id = ?, last_error = ?, caused_by_event_id = ?,
                                cancel_caused_by_event_id = ?, updated_at = ?, cancel_refused = ?,
                                version = version + 1
            WHERE id = ? AND version = ?""";

    private static final int PROGRESS_COLUMNS = 20;

    /**
     * The write that stores a shipment opened in this transaction, to send with its first event, if it has one, in
     * one round trip; nothing reads it back as an entity in this transaction (a later event of the same batch reads
     * the row). Persisting it ran Hibernate's persist machinery and flushed it as a statement of its own. Version 0,
     * the first Hibernate gives an entity, which its next update checks.
     */
    public TransactionalWrites.Write insertion(Shipment shipment) {
        Shipment.Progress now = shipment.progress();
        if (now.version() != 0) {
            throw new IllegalArgumentException("only a new shipment is inserted: " + shipment.id() + " is at version "
                    + now.version());
        }
        return new TransactionalWrites.Write(INSERT, 4 + PROGRESS_COLUMNS, (insert, first) -> {
            insert.setObject(first, shipment.id());
            insert.setObject(first + 1, shipment.orderId());
            insert.setString(first + 2, shipment.correlationId());
            insert.setTimestamp(first + 3, Timestamp.from(shipment.createdAt()));
            setProgress(insert, first + 4, now);
        }).expecting(1);
    }

    /**
     * The write that stores what a step changed of a shipment read with {@link #lockByOrderIdForChange} or
     * {@link #lockByIdForChange}, to send in one round trip with the event the step caused; none if nothing changed.
     * The version it was read at must still be the row's (it is: the read locked the row), else the write fails and
     * the transaction rolls back, as Hibernate's optimistic check would. Written by Hibernate, the change was a round
     * trip of its own, apart from the event's.
     */
    public Optional<TransactionalWrites.Write> update(Shipment shipment, Shipment.Progress before) {
        Shipment.Progress now = shipment.progress();
        if (now.equals(before)) {
            return Optional.empty();
        }
        return Optional.of(new TransactionalWrites.Write(UPDATE, PROGRESS_COLUMNS + 2, (update, first) -> {
            setProgress(update, first, now);
            update.setObject(first + PROGRESS_COLUMNS, shipment.id());
            update.setLong(first + PROGRESS_COLUMNS + 1, now.version());
        }).expecting(1));
    }

    private static void setProgress(PreparedStatement statement, int first, Shipment.Progress progress)
            throws SQLException {
        statement.setString(first, progress.status().name());
        statement.setBoolean(first + 1, progress.paid());
        statement.setBoolean(first + 2, progress.cancelRequested());
        statement.setBoolean(first + 3, progress.creationUncertain());
        Address to = progress.address();
        SqlParameters.setString(statement, first + 4, to == null ? null : to.name());
        SqlParameters.setString(statement, first + 5, to == null ? null : to.line1());
        SqlParameters.setString(statement, first + 6, to == null ? null : to.line2());
        SqlParameters.setString(statement, first + 7, to == null ? null : to.city());
        SqlParameters.setString(statement, first + 8, to == null ? null : to.postalCode());
        SqlParameters.setString(statement, first + 9, to == null ? null : to.country());
        statement.setInt(first + 10, progress.attempts());
        statement.setInt(first + 11, progress.cancelAttempts());
        SqlParameters.setInstant(statement, first + 12, progress.nextAttemptAt());
        SqlParameters.setInstant(statement, first + 13, progress.claimedUntil());
        SqlParameters.setString(statement, first + 14, progress.carrierShipmentId());
        SqlParameters.setString(statement, first + 15, progress.lastError());
        SqlParameters.setUuid(statement, first + 16, progress.causedByEventId());
        SqlParameters.setUuid(statement, first + 17, progress.cancelCausedByEventId());
        statement.setTimestamp(first + 18, Timestamp.from(progress.updatedAt()));
        statement.setBoolean(first + 19, progress.cancelRefused());
    }

    /** The shipment, locked until the transaction ends; empty if it is gone or another transaction holds it. */
    public Optional<Shipment> lockByIdUnlessLocked(UUID id) {
        @SuppressWarnings("unchecked")
        List<Shipment> rows = getEntityManager().createNativeQuery(BY_ID_SKIP_LOCKED, Shipment.class)
                .setParameter("id", id)
                .getResultList();
        return rows.stream().findFirst();
    }

    /** Rows whose carrier call is due and that nobody is calling for, locked; rows another transaction holds are skipped. */
    @SuppressWarnings("unchecked")
    public List<Shipment> lockDue(Instant now, int limit) {
        return getEntityManager().createNativeQuery(DUE, Shipment.class)
                .setParameter("now", now)
                .setParameter("limit", limit)
                .getResultList();
    }

    /** A shipment a create at the carrier would be news to, with what a log line of its saga needs. */
    public record UnknownAtCarrier(UUID id, UUID orderId, String correlationId, UUID causedByEventId, String status) {
    }

    /**
     * Of these shipments, the ones a create at the carrier would be news to, all of them without a carrier shipment:
     * cancelled (the cancellation looked and found none), cancelling (it is looking, or will), on hold (every call of
     * ours failed), requested (a call whose answer was lost, or is on its way), or rejected (a call that went through
     * unseen before a later one was refused). A carrier that forgot the key makes a new parcel on each retry and finds
     * none when looked for by the key, so a parcel the report shows only while its shipment waits for an answer, or for
     * a lookup, would otherwise never be looked at again.
     */
    @SuppressWarnings("unchecked")
    public List<UnknownAtCarrier> unknownAtCarrierAmong(Collection<UUID> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        List<Object[]> rows = getEntityManager().createNativeQuery("""
                        SELECT id, order_id, correlation_id, caused_by_event_id, status FROM shipment
                        WHERE id IN (?1)
                          AND carrier_shipment_id IS NULL
                          AND status IN ('CANCELLED', 'CANCELLING', 'ON_HOLD', 'REQUESTED', 'REJECTED')""")
                .setParameter(1, ids)
                .getResultList();
        return rows.stream().map(row -> new UnknownAtCarrier((UUID) row[0], (UUID) row[1], (String) row[2], (UUID) row[3],
                (String) row[4])).toList();
    }

    /**
     * A shipment that recorded its carrier shipment (null for one the carrier refused): what the carrier's report is
     * checked against.
     */
    public record AtCarrier(UUID id, UUID orderId, String correlationId, String carrierShipmentId) {
    }

    /** Of these shipments, the ones that recorded a carrier shipment, by id. */
    @SuppressWarnings("unchecked")
    public Map<UUID, AtCarrier> recordedAtCarrierAmong(Collection<UUID> ids) {
        if (ids.isEmpty()) {
            return Map.of();
        }
        List<Object[]> rows = getEntityManager().createNativeQuery("""
                        SELECT id, order_id, correlation_id, carrier_shipment_id FROM shipment
                        WHERE id IN (?1) AND carrier_shipment_id IS NOT NULL""")
                .setParameter(1, ids)
                .getResultList();
        Map<UUID, AtCarrier> recorded = new HashMap<>();
        rows.forEach(row -> recorded.put((UUID) row[0], new AtCarrier((UUID) row[0], (UUID) row[1], (String) row[2],
                (String) row[3])));
        return recorded;
    }
}
