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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/** Each service streams its own outbox to its own topic, from its own database and slot. */
class EveryServiceRelaysIT {

    private static final Set<String> EVERY_SERVICE =
            Set.of("saga_consumer_parked_total", "saga_relay_published_total", "saga_relay_slot_lost_at_seconds");
    private static final Set<String> PAYMENT_SERIES = Set.of("saga_compensation_failures_total",
            "saga_payment_charges_held_total", "saga_payment_settlements_unmatched_total",
            "saga_provider_report_failed_runs", "saga_provider_outcomes_unrecorded_total");
    private static final Set<String> SHIPPING_SERIES = Set.of("saga_compensation_failures_total",
            "saga_shipping_shipments_held_total", "saga_shipping_shipments_unmatched_total",
            "saga_provider_report_failed_runs", "saga_provider_outcomes_unrecorded_total");
    private static final Pattern PARKED_TOPIC =
            Pattern.compile("(?m)^saga_consumer_parked_total\\{[^}]*\\btopic=\"([^\"]+)\"");

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
            // before any order: a rule's increase() sees the first incident only in a series that was there before it
            // (a message parked from a replay topic counts under the topic it first came from, so those have none)
            assertSeriesFromTheStart(order, "order-service", Set.of("saga_orders_stalled"));
            assertSeriesFromTheStart(inventory, "inventory-service", Set.of());
            assertSeriesFromTheStart(payment, "payment-service", PAYMENT_SERIES);
            assertSeriesFromTheStart(shipping, "shipping-service", SHIPPING_SERIES);

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

        }
    }

    @Test
    void theStartupCheckCoversEverySeriesTheRulesName() throws Exception {
        Set<String> covered = new TreeSet<>(EVERY_SERVICE);
        covered.add("saga_orders_stalled");
        covered.addAll(PAYMENT_SERIES);
        covered.addAll(SHIPPING_SERIES);
        // a rule on a new series fails here until the check above says which service must expose it
        assertThat(covered).isEqualTo(AlertRules.read().series());
    }

    /**
     * The series a rule names that the service must expose once it started: those every service has, its own, and
     * the parked counter of each topic its consumer reads (a rule groups by topic, so each needs its own series).
     */
    private static void assertSeriesFromTheStart(ServiceProcess service, String module, Set<String> own) {
        Set<String> consumedTopics = new TreeSet<>(ConsumerLag.CONSUMED.get(module));
        consumedTopics.removeAll(Topics.REPLAY_TOPICS);
        String metrics = given().baseUri(service.managementUrl()).get("/q/metrics")
                .then().statusCode(200).extract().asString();
        assertThat(AlertRules.exposed(metrics)).as(service.name()).containsAll(EVERY_SERVICE).containsAll(own);
        Set<String> parkedTopics = new TreeSet<>();
        Matcher m = PARKED_TOPIC.matcher(metrics);
        while (m.find()) {
            parkedTopics.add(m.group(1));
        }
        assertThat(parkedTopics).as(service.name()).isEqualTo(consumedTopics);
    }

    private static void assertRelayed(KafkaTopicProbe topics, String database, String topic, SagaEvent event) throws Exception {
        UUID orderId = UUID.randomUUID();
        OutboxRows.commit(database, EventEnvelope.of(orderId, "relay-" + orderId, null, event));
        KafkaTopicProbe.Received received = topics.awaitKey(orderId.toString(), Duration.ofSeconds(30));
        assertThat(received.record().topic()).isEqualTo(topic);
    }
}
