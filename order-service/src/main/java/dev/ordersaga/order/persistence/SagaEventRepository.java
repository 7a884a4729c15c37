package dev.ordersaga.order.persistence;

import dev.ordersaga.order.domain.SagaEventRecord;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import io.quarkus.panache.common.Sort;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.UUID;

@ApplicationScoped
public class SagaEventRepository implements PanacheRepositoryBase<SagaEventRecord, Long> {

    /** In the order the events happened; events of one instant in the order they were recorded. */
    public List<SagaEventRecord> timeline(UUID orderId) {
        return list("orderId", Sort.by("occurredAt").and("seq"), orderId);
    }
}
