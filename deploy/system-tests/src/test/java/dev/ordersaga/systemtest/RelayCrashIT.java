package dev.ordersaga.systemtest;

import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** kill -9 between the commit of a state change and the publication of its event. */
class RelayCrashIT {

    @Test
    void serviceKilledAfterCommitBeforePublishPublishesAfterRestartAndTheEffectHappensOnce() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             ServiceProcess inventory = ServiceProcess.start("inventory-service", "crash-inventory", 18182, Map.of()).awaitReady()) {

            UUID orderId;
            Instant placedAt;
            try (ServiceProcess holding = ServiceProcess.start("order-service", "crash-order-holding", 18181,
                    Map.of("eventing.relay.fault.hold-before-publish", "true")).awaitReady()) {
                holding.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
                orderId = OrderApi.placeOrder(holding);
                placedAt = Instant.now();
                await().atMost(Duration.ofSeconds(30)).until(() -> holding.logContains("FAULT INJECTION: holding"));
                holding.kill();
            }

            assertThat(Databases.count("order_db", "SELECT count(*) FROM orders WHERE id = ?", orderId))
                    .as("the order's transaction committed").isEqualTo(1);
            // the killed relay publishes nothing more: once the probe read all the topic holds, what it has is all
            orderEvents.awaitCaughtUp(Duration.ofSeconds(30));
            assertThat(orderEvents.matching(r -> orderId.toString().equals(r.key())))
                    .as("nothing published before the kill").isEmpty();

            Instant restartedAt = Instant.now();
            try (ServiceProcess restarted = ServiceProcess.start("order-service", "crash-order-restarted", 18181, Map.of()).awaitReady()) {
                orderEvents.awaitKey(orderId.toString(), Duration.ofSeconds(60));
                // counted from the event's commit, before the kill, not from the restarted engine's reading of it
                assertThat(relayLatencyMaxSeconds(restarted)).as("commit -> publish of the event held over the crash")
                        .isGreaterThanOrEqualTo(Duration.between(placedAt, restartedAt).toMillis() / 1000.0);
                await().atMost(Duration.ofSeconds(30)).until(() ->
                        Databases.count("inventory_db", "SELECT count(*) FROM inbox WHERE order_id = ?", orderId) == 1);
                assertThat(Databases.count("inventory_db", "SELECT count(*) FROM order_sighting WHERE order_id = ?", orderId))
                        .as("inventory's effect of the order").isEqualTo(1);
            }
        }
    }

    private static double relayLatencyMaxSeconds(ServiceProcess service) {
        String metrics = given().baseUri(service.managementUrl()).get("/q/metrics").then().statusCode(200).extract().asString();
        return metrics.lines().filter(l -> l.startsWith("saga_relay_commit_to_publish_seconds_max"))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).max()
                .orElseThrow(() -> new AssertionError("no saga_relay_commit_to_publish_seconds_max in the metrics"));
    }
}
