package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.inventory.domain.OrderSighting;
import io.quarkus.hibernate.orm.panache.PanacheRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import java.sql.Timestamp;

@ApplicationScoped
public class OrderSightingRepository implements PanacheRepository<OrderSighting> {

    private static final String INSERT =
            "INSERT INTO order_sighting (order_id, event_id, correlation_id, seen_at) VALUES (?, ?, ?, ?)";

    @Inject
    TransactionalWrites writes;

    /**
     * Adds the row in the caller's transaction with one plain INSERT. Sightings are append-only and never read
     * back where they are written; persisting the entity made Hibernate run its identity insert at once, with
     * the whole persist machinery around it, for every OrderCreated (a twentieth of this service's CPU).
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void append(OrderSighting sighting) {
        writes.write(INSERT, insert -> {
            insert.setObject(1, sighting.orderId());
            insert.setObject(2, sighting.eventId());
            insert.setString(3, sighting.correlationId());
            insert.setTimestamp(4, Timestamp.from(sighting.seenAt()));
        }, () -> "note the sighting of order " + sighting.orderId());
    }
}
