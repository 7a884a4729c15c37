package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.InboxClaim;
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
import java.util.UUID;

@ApplicationScoped
public class OrderSightingRepository implements PanacheRepository<OrderSighting> {

    private static final String INSERT = """
            INSERT INTO order_sighting (order_id, event_id, correlation_id, seen_at) VALUES (?, ?, ?, ?)""";

    private static final String RESERVATION_STATUS = "SELECT status FROM reservation WHERE order_id = ?";

    /** What OrderCreated needs before it can reserve: whether the order has a reservation, and the stock, locked. */
    public record Sighted(Optional<ReservationStatus> reservation, LockedStock stock) {
    }

    @Inject
    TransactionalWrites writes;

    /**
     * All that OrderCreated asks before it acts, in the round trip of the event's inbox claim, which goes first:
     * whether the order already has a reservation, and the stock rows of the given SKUs, locked. The stock is locked
     * even when the order has its reservation already (a redelivery, rare): asking first would cost every first
     * delivery a round trip. The caller asks the claim whether the event is a duplicate before it acts.
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Sighted lockStock(UUID orderId, Collection<String> skus, InboxClaim claim) {
        TransactionalWrites.Write statements = claim.then(new TransactionalWrites.Write(RESERVATION_STATUS, 1,
                (read, first) -> read.setObject(first, orderId)).then(StockRepository.locking(skus)));
        return writes.read(statements, results -> {
            claim.answer(results);
            return new Sighted(results.rows(row -> ReservationStatus.valueOf(row.getString(1))).stream().findFirst(),
                    LockedStock.from(results));
        }, () -> "lock the stock of order " + orderId);
    }

    /**
     * The sighting's row, to send with what else its event writes. Sightings are append-only and never read back
     * where they are written; persisting the entity made Hibernate run its identity insert at once, with the whole
     * persist machinery around it (a twentieth of this service's CPU).
     */
    public TransactionalWrites.Write appending(OrderSighting sighting) {
        return new TransactionalWrites.Write(INSERT, 4, (insert, first) -> {
            insert.setObject(first, sighting.orderId());
            insert.setObject(first + 1, sighting.eventId());
            insert.setString(first + 2, sighting.correlationId());
            insert.setTimestamp(first + 3, Timestamp.from(sighting.seenAt()));
        });
    }
}
