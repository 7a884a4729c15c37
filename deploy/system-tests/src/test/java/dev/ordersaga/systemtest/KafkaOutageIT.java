package dev.ordersaga.systemtest;

import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What the outbox promises the customer: while Kafka is down, orders are still taken (the service stays ready, as
 * its HTTP needs PostgreSQL only), and each order's saga starts once Kafka is back.
 */
class KafkaOutageIT {

    @Test
    void ordersAreTakenWhileKafkaIsDownAndTheirEventsArePublishedOnceItIsBack() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             ServiceProcess order = ServiceProcess.start("order-service", "kafka-outage-order", 18181, Map.of())
                     .awaitReady()) {
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            UUID before = OrderApi.placeOrder(order);
            orderEvents.awaitKey(before.toString(), Duration.ofSeconds(30));

            UUID duringOutage;
            SagaSystem.stack("kafka", "stop", "kafka-outage");
            try {
                await("order-service ready while Kafka is down").during(Duration.ofSeconds(15))
                        .atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500))
                        .until(() -> order.health() != null);
                duringOutage = OrderApi.placeOrder(order);
                assertThat(Databases.count("order_db", "SELECT count(*) FROM orders WHERE id = ?", duringOutage))
                        .as("the order is stored").isEqualTo(1);
            } finally {
                SagaSystem.stack("kafka", "start", "kafka-outage");
            }
            orderEvents.awaitKey(duringOutage.toString(), Duration.ofSeconds(120));
        }
    }
}
