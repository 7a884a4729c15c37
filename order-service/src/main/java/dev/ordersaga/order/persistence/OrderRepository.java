package dev.ordersaga.order.persistence;

import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import org.hibernate.Locking;
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
     * read and its row locked in one statement ({@code FOR NO KEY UPDATE OF} the order, its items joined unlocked);
     * a second transaction waits for the lock and then reads what the first committed.
     */
    public Optional<Order> findForUpdate(UUID id) {
        // Hibernate would otherwise read the order and its items unlocked and lock the row with a second query
        return Optional.ofNullable(getEntityManager().find(Order.class, id, LockModeType.PESSIMISTIC_WRITE,
                Locking.Scope.ROOT_ONLY, Locking.FollowOn.DISALLOW));
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
