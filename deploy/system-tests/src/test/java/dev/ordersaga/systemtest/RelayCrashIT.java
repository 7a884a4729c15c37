package dev.ordersaga.systemtest;

import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** kill -9 between the commit of a state change and the publication of its event. */
class RelayCrashIT {

    @Test
    void serviceKilledAfterCommitBeforePublishPublishesAfterRestartAndTheEffectHappensOnce() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             ServiceProcess inventory = ServiceProcess.start("inventory-service", "crash-inventory", 18182, Map.of()).awaitReady()) {

            UUID orderId;
            try (ServiceProcess holding = ServiceProcess.start("order-service", "crash-order-holding", 18181,
                    Map.of("eventing.relay.fault.hold-before-publish", "true")).awaitReady()) {
                holding.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
                orderId = OrderApi.placeOrder(holding);
                await().atMost(Duration.ofSeconds(30)).until(() -> holding.logContains("FAULT INJECTION: holding"));
                holding.kill();
            }

            assertThat(Databases.count("order_db", "SELECT count(*) FROM orders WHERE id = ?", orderId))
                    .as("the order's transaction committed").isEqualTo(1);
            assertThat(orderEvents.matching(r -> orderId.toString().equals(r.key())))
                    .as("nothing published before the kill").isEmpty();

            try (ServiceProcess restarted = ServiceProcess.start("order-service", "crash-order-restarted", 18181, Map.of()).awaitReady()) {
                orderEvents.awaitKey(orderId.toString(), Duration.ofSeconds(60));
                await().atMost(Duration.ofSeconds(30)).until(() ->
                        Databases.count("inventory_db", "SELECT count(*) FROM inbox WHERE order_id = ?", orderId) == 1);
                assertThat(Databases.count("inventory_db", "SELECT count(*) FROM order_sighting WHERE order_id = ?", orderId))
                        .as("inventory's effect of the order").isEqualTo(1);
            }
        }
    }
}
