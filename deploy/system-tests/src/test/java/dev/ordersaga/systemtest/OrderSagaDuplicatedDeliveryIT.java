package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Rule 12: every event of every topic delivered twice (each relay publishes each event twice). Every rule of
 * {@link OrderSagaIT} must still hold, each effect once.
 */
class OrderSagaDuplicatedDeliveryIT extends OrderSagaIT {

    @Override
    Map<String, String> faults() {
        return Map.of("eventing.relay.fault.publish-twice", "true");
    }

    @Override
    String runName() {
        return "saga-duplicated";
    }

    @Test
    void everyConsumerReceivedDuplicatesAndAbsorbedThem() {
        Map<Integer, String> services = Map.of(SagaSystem.ORDER, "order-service", SagaSystem.INVENTORY,
                "inventory-service", SagaSystem.PAYMENT, "payment-service", SagaSystem.SHIPPING, "shipping-service");
        // the counters add up over the class: this order's duplicates are the growth from here
        Map<Integer, Double> before = new LinkedHashMap<>();
        for (int port : services.keySet()) {
            before.put(port, duplicates(port));
        }
        String sku = stocked(5);
        UUID order = saga.place("twice-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new SagaSystem.Line(sku, 1, PRICE));
        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CONFIRMED");
        for (Map.Entry<Integer, String> service : services.entrySet()) {
            // a consumer may reach an event's second copy after the order settled (inventory's OrderConfirmed)
            await("duplicates skipped by " + service.getValue()).atMost(SETTLED)
                    .until(() -> duplicates(service.getKey()) - before.get(service.getKey()), delta -> delta > 0);
            // and this order's among them, not a straggler of an earlier test's
            await("duplicates of this order skipped by " + service.getValue()).atMost(SETTLED)
                    .until(() -> saga.logLines(service.getValue(), "Duplicate ", "for order " + order), n -> n > 0);
        }
        // a copy acted on would call again under the same key: the ledgers' call counts show it, their entries not
        assertThat(saga.chargeCalls(order)).as("charges, and the calls with each one's key").containsExactly(1);
        assertThat(saga.shipments(order)).containsExactly("created");
        assertThat(saga.carrierCreateCalls(order)).as("create calls with the shipment's key").containsExactly(1);
    }

    private double duplicates(int port) {
        return saga.metric(port, "saga_inbox_duplicates_total", "");
    }
}
