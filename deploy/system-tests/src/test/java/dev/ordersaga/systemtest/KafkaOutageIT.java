package dev.ordersaga.systemtest;

import dev.ordersaga.eventing.EventHeaders;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
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

    /**
     * Kafka stays away longer than the relay's delivery timeout. The order's OrderCreated runs out of time first, while
     * its OrderCancelling, handed over later, still has some; Kafka comes back in between. The producer must not send
     * the later event on its own: the restarted relay publishes both again, and the topic must show them in the order
     * they were committed, as consumers read them.
     */
    @Test
    void anOrdersEventsStayInOrderWhenKafkaStaysAwayPastTheDeliveryTimeout() throws Exception {
        // Kafka must answer again before the cancel's event runs out too: the time it has to start is the spacing
        // between the two events, less what the cancel needs to reach the producer
        Duration deliveryTimeout = Duration.ofSeconds(30);
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             // With its only broker gone, a client forgets the cluster (it bootstraps again) and the relay's send
             // waits for the topic's metadata, one event at a time. A cluster whose other brokers answer while a
             // partition's leader is away keeps it, and the sends wait in the producer's buffer, where they run out
             // of time batch after batch; without rebootstrapping this single broker is such a cluster. A batch
             // collects a partition's events while it waits, up to its size: a busy outage fills many, and here
             // every event is a batch of its own.
             ServiceProcess order = ServiceProcess.start("order-service", "kafka-outage-ordering", 18181,
                     Map.of("eventing.relay.delivery-timeout", deliveryTimeout.toString(),
                             "kafka.metadata.recovery.strategy", "none",
                             "kafka.batch.size", "1")).awaitReady()) {
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            // the relay's producer knows the topic's partitions, so that its sends wait in its buffer, not for metadata
            orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));
            UUID id;
            Instant cancelled;
            SagaSystem.stack("kafka", "stop", "kafka-outage-ordering");
            try {
                id = OrderApi.placeOrder(order);
                // the scenario's spacing, not a wait for an outcome: the cancel's event must reach the producer
                // well after the order's, so that only the order's has run out when Kafka comes back
                Thread.sleep(deliveryTimeout.minusSeconds(4).toMillis());
                given().baseUri(order.baseUrl()).post("/orders/{id}/cancel", id).then().statusCode(202);
                cancelled = Instant.now();
                await("the OrderCreated ran out of delivery time").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> order.logContains("Kafka did not acknowledge an event"));
            } finally {
                SagaSystem.stack("kafka", "start", "kafka-outage-ordering");
            }
            // else both events ran out, and the topic's order below would hold whatever the producer did
            assertThat(Instant.now()).as("Kafka back while the cancel's event still had time: the scenario happened")
                    .isBefore(cancelled.plus(deliveryTimeout));
            String key = id.toString();
            await("the OrderCancelling on the topic").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
                    .until(() -> !orderEvents.matching(r -> key.equals(r.key())
                            && "OrderCancelling".equals(r.header(EventHeaders.EVENT_TYPE))).isEmpty());
            List<String> types = orderEvents.matching(r -> key.equals(r.key())).stream()
                    .map(r -> r.header(EventHeaders.EVENT_TYPE)).toList();
            assertThat(types).as("the order's events as a consumer reads them").startsWith("OrderCreated")
                    .contains("OrderCancelling");
            // the engine stopped itself; closing it again must not replace that report with its refusal
            assertThat(order.logContains("CDC relay of order failed; retrying in PT2S: java.lang.IllegalStateException: "
                    + "Debezium engine stopped")).isTrue();
            assertThat(order.logContains("Engine has been already shut down")).isFalse();
        }
    }
}
