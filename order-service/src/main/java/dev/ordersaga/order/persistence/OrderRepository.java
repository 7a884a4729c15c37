package dev.ordersaga.order.persistence;

import dev.ordersaga.eventing.InboxClaim;
import dev.ordersaga.eventing.SqlParameters;
import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.events.Ids;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.order.domain.OrderStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.LockModeType;
import jakarta.transaction.Transactional;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

@ApplicationScoped
public class OrderRepository implements PanacheRepositoryBase<Order, UUID> {

    @Inject
    TransactionalWrites writes;

    private static final String INSERT_ORDER = """
            INSERT INTO orders (id, customer_id, status, total, currency, ship_name, ship_line1, ship_line2, ship_city,
                                ship_postal_code, ship_country, correlation_id, created_at, updated_at, version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)""";

    private static final String INSERT_ITEM = "INSERT INTO order_item (order_id, line_no, sku, quantity, unit_price) "
            + "VALUES (?, ?, ?, ?, ?)";

    /**
     * The writes that store a new order and its items, to send with its first event in one round trip (an order is
     * new and unread in the transaction that places it: nothing needs it managed). Persisting it made Hibernate flush
     * the order and each item as statements of their own at commit, a round trip each and a tenth of this service's
     * CPU at saturation (async-profiler). The columns not written here are those a new order has at their defaults:
     * no cancel or waiting reason, no fact heard ahead, version 0 (the entity's first, which Hibernate checks on its
     * next update).
     */
    public TransactionalWrites.Write insertion(Order order) {
        if (order.status() != OrderStatus.PENDING || order.waitingReason() != null || order.cancelReason() != null) {
            throw new IllegalArgumentException("only a new order is inserted this way: " + order.id() + " is " + order.status());
        }
        Address to = order.shippingAddress();
        TransactionalWrites.Write write = new TransactionalWrites.Write(INSERT_ORDER, 14, (insert, first) -> {
            insert.setObject(first, order.id());
            insert.setString(first + 1, order.customerId());
            insert.setString(first + 2, order.status().name());
            insert.setBigDecimal(first + 3, order.total());
            insert.setString(first + 4, order.currency());
            insert.setString(first + 5, to.name());
            insert.setString(first + 6, to.line1());
            SqlParameters.setString(insert, first + 7, to.line2());
            insert.setString(first + 8, to.city());
            insert.setString(first + 9, to.postalCode());
            insert.setString(first + 10, to.country());
            insert.setString(first + 11, order.correlationId());
            insert.setTimestamp(first + 12, Timestamp.from(order.createdAt()));
            insert.setTimestamp(first + 13, Timestamp.from(order.updatedAt()));
        });
        List<OrderItem> items = order.items();
        for (int i = 0; i < items.size(); i++) {
            OrderItem item = items.get(i);
            int lineNo = i;
            write = write.then(new TransactionalWrites.Write(INSERT_ITEM, 5, (insert, first) -> {
                insert.setObject(first, order.id());
                insert.setInt(first + 1, lineNo);
                insert.setString(first + 2, item.sku());
                insert.setInt(first + 3, item.quantity());
                insert.setBigDecimal(first + 4, item.unitPrice());
            }));
        }
        return write;
    }

    /**
     * For a change: facts of one order arrive on three topics and may be applied at the same moment. The order is
     * read and its row locked in one statement ({@code FOR NO KEY UPDATE}; its items are lazy, so nothing is joined);
     * a second transaction waits for the lock and then reads what the first committed.
     *
     * <p>The lock's default options, on purpose: Hibernate reuses its load plan for a lock mode only when the lock
     * has no other option set, and built the plan (the SQL's whole syntax tree) anew on every call when this asked
     * for {@code Locking.FollowOn.DISALLOW} too: 7.5 % of the service's CPU at saturation (async-profiler).
     */
    public Optional<Order> findForUpdate(UUID id) {
        return findByIdOptional(id, LockModeType.PESSIMISTIC_WRITE);
    }

    private static final String LOCK = """
            SELECT customer_id, total, currency, ship_name, ship_line1, ship_line2, ship_city, ship_postal_code,
                   ship_country, correlation_id, created_at, status, cancel_reason, waiting_reason, waiting_since,
                   waiting_for, stock_reserved, paid, shipment_created, stock_released, payment_refunded,
                   shipment_cancelled, updated_at, version, EXISTS (SELECT 1 FROM saga_event WHERE event_id = ?)
            FROM orders WHERE id = ?
            FOR NO KEY UPDATE""";

    /**
     * An order read for a fact's change, and whether that fact is in its timeline already: applied before, in a
     * transaction that noted it there, even if its inbox entry has been pruned since.
     */
    public record Locked(Order order, boolean factNoted) {
    }

    /**
     * For a fact's change, written by {@link #update} rather than by Hibernate's flush: the order's row, locked as
     * {@link #findForUpdate} locks it, read with plain SQL in the round trip of the event's inbox claim, which goes
     * first. The order is never managed, so Hibernate neither checks it for changes nor writes it (nor, in a later
     * event of the same transaction, hands out a stale copy of a row {@link #update} wrote). Empty if there is no such
     * order. The caller must ask the claim whether the fact is a duplicate before it acts, and then the answer whether
     * the fact is noted in the timeline: the inbox forgets an event after its retention (InboxPruner), the timeline
     * never, and a replay of a dead letter or a redelivery after the consumer group's offsets expired may come later
     * than that. Asked in the same statement, it costs no round trip.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<Locked> lockForChange(UUID id, UUID factId, InboxClaim claim) {
        TransactionalWrites.Write lock = new TransactionalWrites.Write(LOCK, 2, (read, first) -> {
            read.setObject(first, factId);
            read.setObject(first + 1, id);
        });
        return writes.readAfter(claim, lock, row -> new Locked(Order.stored(id, row.getString(1), row.getBigDecimal(2),
                row.getString(3), new Address(row.getString(4), row.getString(5), row.getString(6), row.getString(7),
                        row.getString(8), row.getString(9)),
                row.getString(10), row.getTimestamp(11).toInstant(),
                new Order.Progress(OrderStatus.valueOf(row.getString(12)), row.getString(13), row.getString(14),
                        SqlParameters.getInstant(row, 15), participant(row.getString(16)), row.getBoolean(17),
                        row.getBoolean(18), row.getBoolean(19), row.getBoolean(20), row.getBoolean(21),
                        row.getBoolean(22), row.getTimestamp(23).toInstant(), row.getLong(24))), row.getBoolean(25)),
                () -> "lock order " + id);
    }

    private static Order.Participant participant(String name) {
        return name == null ? null : Order.Participant.valueOf(name);
    }

    private static final String UPDATE_PROGRESS = """
            UPDATE orders SET status = ?, cancel_reason = ?, waiting_reason = ?, waiting_since = ?, waiting_for = ?,
                              stock_reserved = ?, paid = ?, shipment_created = ?, stock_released = ?,
                              payment_refunded = ?, shipment_cancelled = ?, updated_at = ?, version = version + 1
            WHERE id = ? AND version = ?""";

    /**
     * The write that stores what a fact changed of an order read with {@link #lockForChange}, to send in one round trip
     * with the event and the timeline entry it caused; none if nothing changed. The version it was read at must still
     * be the row's (it is: the read locked the row), else the write fails and the transaction rolls back, as
     * Hibernate's optimistic check would. Written by Hibernate, the change was a round trip of its own at every event.
     */
    public Optional<TransactionalWrites.Write> update(Order order, Order.Progress before) {
        Order.Progress now = order.progress();
        if (now.equals(before)) {
            return Optional.empty();
        }
        return Optional.of(new TransactionalWrites.Write(UPDATE_PROGRESS, 14, (update, first) -> {
            update.setString(first, now.status().name());
            SqlParameters.setString(update, first + 1, now.cancelReason());
            SqlParameters.setString(update, first + 2, now.waitingReason());
            SqlParameters.setInstant(update, first + 3, now.waitingSince());
            SqlParameters.setString(update, first + 4, now.waitingFor() == null ? null : now.waitingFor().name());
            update.setBoolean(first + 5, now.stockReserved());
            update.setBoolean(first + 6, now.paid());
            update.setBoolean(first + 7, now.shipmentCreated());
            update.setBoolean(first + 8, now.stockReleased());
            update.setBoolean(first + 9, now.paymentRefunded());
            update.setBoolean(first + 10, now.shipmentCancelled());
            update.setTimestamp(first + 11, Timestamp.from(now.updatedAt()));
            update.setObject(first + 12, order.id());
            update.setLong(first + 13, now.version());
        }).expecting(1));
    }

    /** The order with its items read in the same statement, for an answer built after the transaction. */
    public Optional<Order> findWithItems(UUID id) {
        return find("from Order o left join fetch o.items where o.id = ?1", id).singleResultOptional();
    }

    /**
     * Orders waiting for a person since {@code since} or later, longest waiting first, ties by id; with {@code after}
     * (the last row of a page: its since and id) those after it, so that a page of rows waiting since the same instant
     * is followed by the next, not by itself again.
     */
    public List<Order> waitingForOperator(Instant since, UUID after, int limit) {
        // with no after, the first page starts at since itself
        return find("waitingReason is not null and status not in ?1 and (waitingSince > ?2 or (waitingSince = ?2 and "
                        + "id > ?3))", Sort.by("waitingSince").and("id"),
                List.of(OrderStatus.CONFIRMED, OrderStatus.CANCELLED, OrderStatus.COMPENSATING), since,
                after == null ? Ids.BELOW_EVERY_ID : after)
                .page(0, limit).list();
    }

    /**
     * The orders not finished, by when they were last changed or, waiting for a person, put on hold (the instant the
     * list shows), from {@code since} on; with {@code after}, past that order of the same instant. That instant only
     * grows while an order stays open, so one changed while the pages are walked moves on and is listed again further
     * on; one changed as a page is read can be missed, its instant stamped before its commit, as in the waiting list.
     */
    public List<Order> open(Instant since, UUID after, int limit) {
        return find("status not in ?1 and (coalesce(waitingSince, updatedAt) > ?2 "
                        + "or (coalesce(waitingSince, updatedAt) = ?2 and id > ?3)) "
                        + "order by coalesce(waitingSince, updatedAt), id",
                List.of(OrderStatus.CONFIRMED, OrderStatus.CANCELLED), since,
                after == null ? Ids.BELOW_EVERY_ID : after)
                .page(0, limit).list();
    }
}
