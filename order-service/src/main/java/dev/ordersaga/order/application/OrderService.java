package dev.ordersaga.order.application;

import dev.ordersaga.eventing.OutboxWriter;
import dev.ordersaga.order.domain.Address;
import dev.ordersaga.order.domain.Order;
import dev.ordersaga.order.domain.OrderItem;
import dev.ordersaga.order.persistence.OrderRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.jboss.logging.Logger;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** One transactional method per command: load or create, call the state machine, hand its event to the outbox. */
@ApplicationScoped
public class OrderService {

    private static final Logger LOG = Logger.getLogger(OrderService.class);

    @Inject
    OrderRepository orders;

    @Inject
    OutboxWriter outbox;

    public record PlaceOrder(String customerId, List<OrderItem> items, String currency, Address shippingAddress,
                             String paymentToken, String correlationId) {
    }

    @Transactional
    public Order place(PlaceOrder command) {
        Order.Placed placed = Order.place(UUID.randomUUID(), command.customerId(), command.items(), command.currency(),
                command.shippingAddress(), command.paymentToken(), command.correlationId());
        orders.persist(placed.order());
        outbox.publish(placed.order().id(), placed.event());
        LOG.infof("Order %s placed: %d item(s), total %s %s", placed.order().id(), command.items().size(),
                placed.order().total(), command.currency());
        return placed.order();
    }

    @Transactional
    public Optional<Order> find(UUID id) {
        return orders.findByIdOptional(id);
    }
}
