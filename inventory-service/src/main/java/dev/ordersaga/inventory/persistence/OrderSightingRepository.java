package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.inventory.domain.OrderSighting;
import dev.ordersaga.inventory.domain.ReservationStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.sql.Timestamp;
import java.util.Collection;
import java.util.Optional;

@ApplicationScoped
public class OrderSightingRepository implements PanacheRepository<OrderSighting> {

    /** The sighting, and the status of the order's reservation if it has one, in one statement. */
    private static final String INSERT_THEN_RESERVATION = """
            WITH sighting AS (
                INSERT INTO order_sighting (order_id, event_id, correlation_id, seen_at) VALUES (?, ?, ?, ?))
            SELECT status FROM reservation WHERE order_id = ?""";

    /** What OrderCreated needs before it can reserve: whether the order has a reservation, and the stock, locked. */
    public record Sighted(Optional<ReservationStatus> reservation, LockedStock stock) {
    }

    @Inject
    TransactionalWrites writes;

    /**
     * Adds the row in the caller's transaction with one plain INSERT, and answers in the same round trip whether the
     * order already has a reservation and with the stock rows of the given SKUs, locked: all that OrderCreated asks
     * next. Sightings are append-only and never read back where they are written; persisting the entity made
     * Hibernate run its identity insert at once, with the whole persist machinery around it (a twentieth of this
     * service's CPU), and each further question was a round trip of its own.
     *
     * <p>The stock is locked even when the order has its reservation already (a redelivery, rare): asking first
     * would cost every first delivery a round trip.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Sighted appendAndLockStock(OrderSighting sighting, Collection<String> skus) {
        TransactionalWrites.Write statements = new TransactionalWrites.Write(INSERT_THEN_RESERVATION, 5, (insert, first) -> {
            insert.setObject(first, sighting.orderId());
            insert.setObject(first + 1, sighting.eventId());
            insert.setString(first + 2, sighting.correlationId());
            insert.setTimestamp(first + 3, Timestamp.from(sighting.seenAt()));
            insert.setObject(first + 4, sighting.orderId());
        }).then(StockRepository.locking(skus));
        return writes.read(statements, results -> new Sighted(
                        results.rows(row -> ReservationStatus.valueOf(row.getString(1))).stream().findFirst(),
                        LockedStock.from(results)),
                () -> "note the sighting of order " + sighting.orderId());
    }
}
