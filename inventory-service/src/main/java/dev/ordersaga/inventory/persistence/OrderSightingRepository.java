package dev.ordersaga.inventory.persistence;

import dev.ordersaga.eventing.EventStoreException;
import dev.ordersaga.inventory.domain.OrderSighting;
import io.quarkus.hibernate.orm.panache.PanacheRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;

@ApplicationScoped
public class OrderSightingRepository implements PanacheRepository<OrderSighting> {

    private static final String INSERT =
            "INSERT INTO order_sighting (order_id, event_id, correlation_id, seen_at) VALUES (?, ?, ?, ?)";

    /** The pool enlists its connections in the caller's JTA transaction: the one the reservation flushes into. */
    @Inject
    DataSource dataSource;

    /**
     * Adds the row in the caller's transaction with one plain INSERT. Sightings are append-only and never read
     * back where they are written; persisting the entity made Hibernate run its identity insert at once, with
     * the whole persist machinery around it, for every OrderCreated (a twentieth of this service's CPU).
     */
    @Transactional(Transactional.TxType.MANDATORY)
    public void append(OrderSighting sighting) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement insert = connection.prepareStatement(INSERT)) {
            insert.setObject(1, sighting.orderId());
            insert.setObject(2, sighting.eventId());
            insert.setString(3, sighting.correlationId());
            insert.setTimestamp(4, Timestamp.from(sighting.seenAt()));
            insert.executeUpdate();
        } catch (SQLException e) {
            throw new EventStoreException("could not note the sighting of order " + sighting.orderId(), e);
        }
    }
}
