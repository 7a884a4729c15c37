package dev.ordersaga.order.persistence;

import dev.ordersaga.order.domain.IdempotencyKey;
import io.quarkus.hibernate.orm.panache.PanacheRepositoryBase;
import jakarta.enterprise.context.ApplicationScoped;

@ApplicationScoped
public class IdempotencyKeyRepository implements PanacheRepositoryBase<IdempotencyKey, String> {
}
