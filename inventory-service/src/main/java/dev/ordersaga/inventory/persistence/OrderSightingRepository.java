package dev.ordersaga.inventory.persistence;

import dev.ordersaga.inventory.domain.OrderSighting;
import io.quarkus.hibernate.orm.panache.PanacheRepository;
import jakarta.enterprise.context.ApplicationScoped;

@ApplicationScoped
public class OrderSightingRepository implements PanacheRepository<OrderSighting> {
}
