package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

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
        String sku = stocked(5);
        UUID order = saga.place("twice-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new SagaSystem.Line(sku, 1, PRICE));
        assertThat(saga.awaitSettled(order, SETTLED).path("status").asText()).isEqualTo("CONFIRMED");
        for (int port : List.of(SagaSystem.ORDER, SagaSystem.INVENTORY, SagaSystem.PAYMENT, SagaSystem.SHIPPING)) {
            assertThat(saga.metric(port, "saga_inbox_duplicates_total", "")).as("duplicates skipped on port " + port)
                    .isPositive();
        }
        assertThat(saga.charges(order)).hasSize(1);
        assertThat(saga.shipments(order)).containsExactly("created");
    }
}
