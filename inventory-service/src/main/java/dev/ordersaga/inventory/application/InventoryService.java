package dev.ordersaga.inventory.application;

import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.inventory.domain.OrderSighting;
import dev.ordersaga.inventory.persistence.OrderSightingRepository;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import org.jboss.logging.Logger;

/** One transactional method per incoming fact. */
@ApplicationScoped
public class InventoryService {

    private static final Logger LOG = Logger.getLogger(InventoryService.class);

    @Inject
    OrderSightingRepository sightings;

    @Transactional(Transactional.TxType.MANDATORY)
    public void onOrderCreated(EventEnvelope<?> event, OrderCreated created) {
        sightings.persist(new OrderSighting(event.orderId(), event.eventId(), event.correlationId()));
        LOG.infof("Order %s seen: %d line(s)", event.orderId(), created.items().size());
    }
}
