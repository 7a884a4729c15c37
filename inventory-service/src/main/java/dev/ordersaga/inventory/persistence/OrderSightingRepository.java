package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.inventory.domain.OrderSighting;
import dev.ordersaga.inventory.domain.ReservationStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.sql.Timestamp;
import java.util.Optional;

@ApplicationScoped
public class OrderSightingRepository implements PanacheRepository<OrderSighting> {

    /** The sighting, and the status of the order's reservation if it has one, in one round trip. */
    private static final String INSERT_THEN_RESERVATION = """
            WITH sighting AS (
                INSERT INTO order_sighting (order_id, event_id, correlation_id, seen_at) VALUES (?, ?, ?, ?))
            SELECT status FROM reservation WHERE order_id = ?""";

    @Inject
    TransactionalWrites writes;

    /**
     * Adds the row in the caller's transaction with one plain INSERT, and answers in the same statement whether the
     * order already has a reservation, which is what OrderCreated asks next. Sightings are append-only and never
     * read back where they are written; persisting the entity made Hibernate run its identity insert at once, with
     * the whole persist machinery around it (a twentieth of this service's CPU), and loading the reservation
     * entity only to see whether there is one cost another round trip and a twentieth more.
     *
     * @return the status of the order's reservation, if it has one
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public Optional<ReservationStatus> appendAndFindReservation(OrderSighting sighting) {
        return writes.writeAndRead(INSERT_THEN_RESERVATION, insert -> {
            insert.setObject(1, sighting.orderId());
            insert.setObject(2, sighting.eventId());
            insert.setString(3, sighting.correlationId());
            insert.setTimestamp(4, Timestamp.from(sighting.seenAt()));
            insert.setObject(5, sighting.orderId());
        }, row -> ReservationStatus.valueOf(row.getString(1)), () -> "note the sighting of order " + sighting.orderId());
    }
}
