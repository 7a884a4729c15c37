package dev.ordersaga.order.persistence;

import dev.ordersaga.order.domain.OperatorAction;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.UUID;

@ApplicationScoped
public class OperatorActionRepository implements PanacheRepositoryBase<OperatorAction, Long> {

    public List<OperatorAction> forOrder(UUID orderId) {
        return list("orderId", Sort.by("at"), orderId);
    }
}
