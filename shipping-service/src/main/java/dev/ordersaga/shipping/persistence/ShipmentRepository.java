package dev.ordersaga.shipping.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.shipping.domain.Shipment;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.LockModeType;

import java.time.Instant;
import java.util.List;
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

    /**
     * Serialises, until the transaction ends, everything that happens to one order in this service: the first two
     * facts of an order (e.g. OrderCreated and PaymentSucceeded, on two consumers) must not both create its row.
     */
    public void lockOrder(UUID orderId) {
        writes.lockUntilCommit(ORDER_LOCK_SPACE, orderId.hashCode(), () -> "lock order " + orderId);
    }

    public Optional<Shipment> findByOrderId(UUID orderId) {
        return find("orderId", orderId).firstResultOptional();
    }

    /** The shipment of an order, locked until the transaction ends. */
    public Optional<Shipment> lockByOrderId(UUID orderId) {
        return find("orderId", orderId).withLock(LockModeType.PESSIMISTIC_WRITE).firstResultOptional();
    }

    /** The shipment, locked until the transaction ends (waits for another transaction that holds it). */
    public Optional<Shipment> lockById(UUID id) {
        return findByIdOptional(id, LockModeType.PESSIMISTIC_WRITE);
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
}
