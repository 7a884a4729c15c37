package dev.ordersaga.order.persistence;

import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderStatus;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

@ApplicationScoped
public class OrderRepository implements PanacheRepositoryBase<Order, UUID> {

    /**
     * For a change: facts of one order arrive on three topics and may be applied at the same moment. The row is
     * locked before the order is read, so the second transaction reads what the first committed.
     */
    public Optional<Order> findForUpdate(UUID id) {
        List<?> locked = getEntityManager().createNativeQuery("SELECT id FROM orders WHERE id = ?1 FOR UPDATE")
                .setParameter(1, id)
                .getResultList();
        return locked.isEmpty() ? Optional.empty() : findByIdOptional(id);
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
