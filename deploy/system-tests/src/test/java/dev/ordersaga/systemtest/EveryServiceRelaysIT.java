package dev.ordersaga.systemtest;

import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.PaymentFailed;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.ShipmentCancelled;
import dev.ordersaga.events.StockReleased;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/** Each service streams its own outbox to its own topic, from its own database and slot. */
class EveryServiceRelaysIT {

    @Test
    void eachServiceRelaysItsOwnOutboxToItsOwnTopic() throws Exception {
        try (KafkaTopicProbe topics = KafkaTopicProbe.fromNow(Topics.EVENT_TOPICS.toArray(String[]::new));
             ServiceProcess order = ServiceProcess.start("order-service", "relays-order", 18181, Map.of()).awaitReady();
             ServiceProcess inventory = ServiceProcess.start("inventory-service", "relays-inventory", 18182, Map.of()).awaitReady();
             ServiceProcess payment = ServiceProcess.start("payment-service", "relays-payment", 18183, Map.of()).awaitReady();
             ServiceProcess shipping = ServiceProcess.start("shipping-service", "relays-shipping", 18184, Map.of()).awaitReady()) {
            for (ServiceProcess service : List.of(order, inventory, payment, shipping)) {
                service.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            }

            UUID orderId = OrderApi.placeOrder(order);
            assertRelayed(topics, "inventory_db", Topics.INVENTORY_EVENTS, new StockReleased("res-x", List.of()));
            assertRelayed(topics, "payment_db", Topics.PAYMENT_EVENTS, new PaymentFailed("pay-x", "test"));
            assertRelayed(topics, "shipping_db", Topics.SHIPPING_EVENTS, new ShipmentCancelled("shp-x"));
            KafkaTopicProbe.Received created = topics.awaitKey(orderId.toString(), Duration.ofSeconds(30));
            assertThat(created.record().topic()).isEqualTo(Topics.ORDER_EVENTS);

            // and each lists the messages it parked on its own dead-letter topic, to operators only
            for (ServiceProcess service : List.of(order, inventory, payment, shipping)) {
                given().baseUri(service.baseUrl()).get("/operator/dead-letters").then().statusCode(401);
                given().baseUri(service.baseUrl()).auth().preemptive().basic("operator", "operator")
                        .get("/operator/dead-letters").then().statusCode(200).contentType("application/json");
            }

            // every series an alert rule watches is there from the start (at zero), in some service
            Set<String> exposed = new TreeSet<>();
            for (ServiceProcess service : List.of(order, inventory, payment, shipping)) {
                exposed.addAll(AlertRules.exposed(given().baseUri(service.managementUrl()).get("/q/metrics")
                        .then().statusCode(200).extract().asString()));
            }
            assertThat(exposed).containsAll(AlertRules.read().series());
        }
    }

    private static void assertRelayed(KafkaTopicProbe topics, String database, String topic, SagaEvent event) throws Exception {
        UUID orderId = UUID.randomUUID();
        OutboxRows.commit(database, EventEnvelope.of(orderId, "relay-" + orderId, null, event));
        KafkaTopicProbe.Received received = topics.awaitKey(orderId.toString(), Duration.ofSeconds(30));
        assertThat(received.record().topic()).isEqualTo(topic);
    }
}
