package dev.ordersaga.order.persistence;

import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.LockModeType;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

@ApplicationScoped
public class OrderRepository implements PanacheRepositoryBase<Order, UUID> {

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

    /** The order with its items read in the same statement, for an answer built after the transaction. */
    public Optional<Order> findWithItems(UUID id) {
        return find("from Order o left join fetch o.items where o.id = ?1", id).singleResultOptional();
    }

    public List<Order> waitingForOperator() {
        return list("waitingReason is not null and status not in ?1", Sort.by("waitingSince"),
                List.of(OrderStatus.CONFIRMED, OrderStatus.CANCELLED, OrderStatus.COMPENSATING));
    }

    public List<Order> open(int limit) {
        return find("status not in ?1", Sort.by("updatedAt"), List.of(OrderStatus.CONFIRMED, OrderStatus.CANCELLED))
                .page(0, limit).list();
    }
}
