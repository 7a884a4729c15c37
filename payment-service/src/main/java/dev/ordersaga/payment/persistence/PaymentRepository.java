package dev.ordersaga.payment.persistence;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.payment.domain.Payment;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.LockModeType;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

@ApplicationScoped
public class PaymentRepository implements PanacheRepositoryBase<Payment, UUID> {

    /** Namespace of the per-order advisory locks (two-key form: never collides with the relay's one-key lock). */
    public static final int ORDER_LOCK_SPACE = 0x5041594D; // "PAYM"

    @Inject
    TransactionalWrites writes;

    /**
     * Serializes the handlers of one order until the transaction ends. OrderCreated and StockReserved come on
     * different topics, so two consumers may both find no payment and create one each; under this lock the second
     * sees the first's row (read committed reads what committed before each statement).
     */
    public void lockOrder(UUID orderId) {
        writes.lockUntilCommit(ORDER_LOCK_SPACE, orderId.hashCode(), () -> "lock order " + orderId);
    }

    /** The order's payment, its row locked until the transaction ends. */
    public Optional<Payment> findByOrderIdForUpdate(UUID orderId) {
        return find("orderId", orderId).withLock(LockModeType.PESSIMISTIC_WRITE).firstResultOptional();
    }

    /** The payment, its row locked until the transaction ends. */
    public Optional<Payment> findByIdForUpdate(UUID id) {
        return findByIdOptional(id, LockModeType.PESSIMISTIC_WRITE);
    }

    public Optional<Payment> findByOrderId(UUID orderId) {
        return find("orderId", orderId).firstResultOptional();
    }

    /**
     * Claims due payments for one worker: rows another transaction holds are skipped, and a claimed row's
     * {@code next_attempt_at} moves to {@code leaseUntil}, so that no other worker (of this or another replica)
     * takes it before this one has recorded its outcome or the lease ran out (a crashed worker).
     */
    @SuppressWarnings("unchecked")
    public List<UUID> claimDue(Instant now, Instant leaseUntil, int limit) {
        List<UUID> ids = getEntityManager().createNativeQuery("""
                        SELECT id FROM payment
                        WHERE status IN ('CHARGING', 'REFUNDING') AND next_attempt_at <= ?1
                        ORDER BY next_attempt_at
                        LIMIT ?2
                        FOR UPDATE SKIP LOCKED""", UUID.class)
                .setParameter(1, now)
                .setParameter(2, limit)
                .getResultList();
        lease(ids, leaseUntil);
        return ids;
    }

    /** Claims one payment if it is due and no other transaction holds it. */
    @SuppressWarnings("unchecked")
    public Optional<UUID> claimIfDue(UUID id, Instant now, Instant leaseUntil) {
        List<UUID> ids = getEntityManager().createNativeQuery("""
                        SELECT id FROM payment
                        WHERE id = ?1 AND status IN ('CHARGING', 'REFUNDING') AND next_attempt_at <= ?2
                        FOR UPDATE SKIP LOCKED""", UUID.class)
                .setParameter(1, id)
                .setParameter(2, now)
                .getResultList();
        lease(ids, leaseUntil);
        return ids.stream().findFirst();
    }

    private void lease(List<UUID> ids, Instant leaseUntil) {
        if (ids.isEmpty()) {
            return;
        }
        getEntityManager()
                .createNativeQuery("UPDATE payment SET next_attempt_at = ?1 WHERE id IN (?2)")
                .setParameter(1, leaseUntil)
                .setParameter(2, ids)
                .executeUpdate();
    }
}
