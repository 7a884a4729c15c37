package dev.ordersaga.inventory.persistence;

import dev.ordersaga.inventory.domain.Reservation;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;

import java.util.Optional;
import java.util.UUID;

/** Reservations by order id (one per order). */
@ApplicationScoped
public class ReservationRepository implements PanacheRepositoryBase<Reservation, UUID> {

    /** The order's reservation, locked for the rest of the transaction. Lock order: reservation, then stock. */
    public Optional<Reservation> lockByOrderId(UUID orderId) {
        return findByIdOptional(orderId, LockModeType.PESSIMISTIC_WRITE);
    }
}
