package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.SqlParameters;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.inventory.domain.Reservation;
import dev.ordersaga.inventory.domain.ReservationStatus;
import dev.ordersaga.inventory.domain.ReservedItem;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Reservations by order id (one per order), read and written with plain SQL on the event path: a handler reads what
 * it needs in one round trip and writes what it changed in the round trip of its event. Through Hibernate, the same
 * work was a round trip for the reservation, one for its items, one for each stock row, and one for each row flushed.
 */
@ApplicationScoped
public class ReservationRepository {

    /** Lock order: reservation, then stock. The items are joined; only the reservation's row is locked. */
    private static final String LOCK_WITH_ITEMS = """
            SELECT r.reservation_id, r.status, r.failure_reason, r.correlation_id, r.created_at, r.updated_at, r.version,
                   i.sku, i.quantity
            FROM reservation r LEFT JOIN reservation_item i ON i.order_id = r.order_id
            WHERE r.order_id = ?
            ORDER BY i.line_no
            FOR NO KEY UPDATE OF r""";

    private static final String INSERT = """
            INSERT INTO reservation (order_id, reservation_id, status, failure_reason, correlation_id, created_at,
                                     updated_at, version)
            VALUES (?, ?, ?, ?, ?, ?, ?, 0)""";

    private static final String INSERT_ITEM = "INSERT INTO reservation_item (order_id, line_no, sku, quantity) VALUES (?, ?, ?, ?)";

    private static final String UPDATE_STATUS = """
            UPDATE reservation SET status = ?, updated_at = ?, version = version + 1
            WHERE order_id = ? AND version = ?""";

    /** The order's reservation and the stock rows it holds, both locked until the transaction ends. */
    public record Locked(Reservation reservation, LockedStock stock) {
    }

    @Inject
    TransactionalWrites writes;

    /**
     * The order's reservation and its stock rows, locked in one round trip (reservation first) after the event's inbox
     * claim; empty if it has none. The caller asks the claim whether the event is a duplicate before it acts.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Locked> lockWithStock(UUID orderId, InboxClaim claim) {
        TransactionalWrites.Write statements = claim.then(new TransactionalWrites.Write(LOCK_WITH_ITEMS, 1,
                (statement, first) -> statement.setObject(first, orderId))
                .then(StockRepository.lockingReservedBy(orderId)));
        return writes.read(statements, results -> {
            claim.answer(results);
            List<Row> rows = results.rows(Row::of);
            LockedStock stock = LockedStock.from(results);
            if (rows.isEmpty()) {
                return Optional.empty();
            }
            Row head = rows.get(0);
            List<ReservedItem> items = rows.stream().filter(row -> row.sku() != null)
                    .map(row -> new ReservedItem(row.sku(), row.quantity())).toList();
            return Optional.of(new Locked(Reservation.stored(orderId, head.reservationId(), head.status(), items,
                    head.failureReason(), head.correlationId(), head.createdAt(), head.updatedAt(), head.version()), stock));
        }, () -> "lock the reservation of order " + orderId);
    }

    /** A reservation with one of its items (none: the SKU is null), as the join returns it. */
    private record Row(UUID reservationId, ReservationStatus status, String failureReason, String correlationId,
                       Instant createdAt, Instant updatedAt, long version, String sku, int quantity) {

        static Row of(ResultSet row) throws SQLException {
            return new Row(row.getObject(1, UUID.class), ReservationStatus.valueOf(row.getString(2)), row.getString(3),
                    row.getString(4), row.getTimestamp(5).toInstant(), row.getTimestamp(6).toInstant(), row.getLong(7),
                    row.getString(8), row.getInt(9));
        }
    }

    /** The writes that store a new reservation and its items, to send in the round trip of its event. */
    public TransactionalWrites.Write insertion(Reservation reservation) {
        if (reservation.version() != 0) {
            throw new IllegalArgumentException("reservation " + reservation.reservationId() + " is stored already");
        }
        TransactionalWrites.Write write = new TransactionalWrites.Write(INSERT, 7, (insert, first) -> {
            insert.setObject(first, reservation.orderId());
            insert.setObject(first + 1, reservation.reservationId());
            insert.setString(first + 2, reservation.status().name());
            SqlParameters.setString(insert, first + 3, reservation.failureReason());
            insert.setString(first + 4, reservation.correlationId());
            insert.setTimestamp(first + 5, Timestamp.from(reservation.createdAt()));
            insert.setTimestamp(first + 6, Timestamp.from(reservation.updatedAt()));
        });
        List<ReservedItem> items = reservation.items();
        for (int i = 0; i < items.size(); i++) {
            ReservedItem item = items.get(i);
            int lineNo = i;
            write = write.then(new TransactionalWrites.Write(INSERT_ITEM, 4, (insert, first) -> {
                insert.setObject(first, reservation.orderId());
                insert.setInt(first + 1, lineNo);
                insert.setString(first + 2, item.sku());
                insert.setInt(first + 3, item.quantity());
            }));
        }
        return write;
    }

    /**
     * The write of a transition of a reservation read with {@link #lockWithStock}: its status, at the version it was
     * read at (which it still has, the read locked it; else the write fails and the transaction rolls back).
     */
    public TransactionalWrites.Write update(Reservation reservation) {
        return new TransactionalWrites.Write(UPDATE_STATUS, 4, (update, first) -> {
            update.setString(first, reservation.status().name());
            update.setTimestamp(first + 1, Timestamp.from(reservation.updatedAt()));
            update.setObject(first + 2, reservation.orderId());
            update.setLong(first + 3, reservation.version());
        }).expecting(1);
    }
}
