package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.ordersaga.events.Topics;
import dev.ordersaga.systemtest.SagaSystem.Line;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The Kubernetes manifests' Kafka takes SCRAM logins over TLS and grants each service what its KafkaUser's ACLs say
 * (deploy/kubernetes/base/kafka-users.yaml). Here a broker does the same with those very ACLs, and the whole system
 * runs on it, each service logging in as its own user and trusting the broker's CA through its environment, as the
 * Deployments do: the saga must
 * go through, a message must be parked, listed, replayed and parked again, and a service's credentials must be
 * refused on another service's topic.
 */
class KafkaAclIT {

    private static final Path REPO = RepoRoot.path();
    private static final Duration SETTLED = Duration.ofSeconds(90);

    @Test
    void theSagaRunsWithEachServiceAllowedOnlyItsOwnTopicsToWrite() throws Exception {
        Map<String, List<String>> acls = kafkaUsers(REPO.resolve("deploy/kubernetes/base/kafka-users.yaml"));
        assertThat(acls).containsOnlyKeys("order-service", "inventory-service", "payment-service", "shipping-service");
        Map<String, String> passwords = new LinkedHashMap<>();
        acls.keySet().forEach(user -> passwords.put(user, UUID.randomUUID().toString()));

        try (SecuredKafka kafka = SecuredKafka.start()) {
            kafka.createTopics(topicsFile(REPO.resolve("deploy/stack/topics.txt")));
            for (Map.Entry<String, List<String>> user : acls.entrySet()) {
                kafka.createUser(user.getKey(), passwords.get(user.getKey()), user.getValue());
            }
            try (SagaSystem saga = SagaSystem.start("kafka-acl", Map.of("kafka.bootstrap.servers", kafka.bootstrap()), 1,
                    service -> kafka.clientEnvironment(service, passwords.get(service)))) {
                String sku = "ACL-" + UUID.randomUUID();
                saga.stock(sku, 5);
                UUID order = saga.place("acl-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new Line(sku, 1, "10.50"));
                assertThat(saga.awaitStatus(order, "CONFIRMED", SETTLED).path("status").asText()).isEqualTo("CONFIRMED");

                // inventory parks a message it cannot read, lists it, and its replay comes back to it alone
                String key = UUID.randomUUID().toString();
                try (KafkaProducer<String, String> orderService = kafka.producer("order-service", passwords.get("order-service"))) {
                    orderService.send(new ProducerRecord<>(Topics.ORDER_EVENTS, key, "not an event")).get(30, TimeUnit.SECONDS);
                }
                String inventory = saga.url(SagaSystem.INVENTORY);
                List<Map<String, Object>> parked = await("inventory parks it").atMost(SETTLED)
                        .pollInterval(Duration.ofMillis(500)).until(() -> deadLetters(inventory, key), letters -> letters.size() == 1);
                given().baseUri(inventory).auth().preemptive().basic("operator", ServiceProcess.OPERATOR_PASSWORD)
                        .post("/operator/dead-letters/{partition}/{offset}/replay", parked.get(0).get("partition"),
                                parked.get(0).get("offset"))
                        .then().statusCode(202);
                List<Map<String, Object>> again = await("inventory hears the replay and parks it again").atMost(SETTLED)
                        .pollInterval(Duration.ofMillis(500)).until(() -> deadLetters(inventory, key), letters -> letters.size() == 2);
                assertThat(again).extracting(letter -> letter.get("topic")).containsOnly(Topics.ORDER_EVENTS);
            }

            // a service's credentials do not publish another service's facts
            try (KafkaProducer<String, String> inventory = kafka.producer("inventory-service", passwords.get("inventory-service"))) {
                assertThatThrownBy(() -> inventory.send(new ProducerRecord<>(Topics.PAYMENT_EVENTS,
                        UUID.randomUUID().toString(), "{\"type\": \"PaymentSucceeded\"}")).get(30, TimeUnit.SECONDS))
                        .hasCauseInstanceOf(TopicAuthorizationException.class);
                // and they do publish its own
                inventory.send(new ProducerRecord<>(Topics.INVENTORY_DLQ, UUID.randomUUID().toString(), "own"))
                        .get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** The messages the service parked for the given order id (the record's key), as its operators see them. */
    private static List<Map<String, Object>> deadLetters(String service, String key) {
        List<Map<String, Object>> all = given().baseUri(service).auth().preemptive()
                .basic("operator", ServiceProcess.OPERATOR_PASSWORD).get("/operator/dead-letters?limit=1000")
                .then().statusCode(200).extract().jsonPath().getList("");
        return all.stream().filter(letter -> key.equals(letter.get("orderId"))).toList();
    }

    /** Each KafkaUser's ACLs as "Operation type name", e.g. "Read topic order.events". */
    private static Map<String, List<String>> kafkaUsers(Path file) throws Exception {
        Map<String, List<String>> users = new LinkedHashMap<>();
        try (MappingIterator<JsonNode> documents = new YAMLMapper().readerFor(JsonNode.class).readValues(file.toFile())) {
            while (documents.hasNext()) {
                JsonNode user = documents.next();
                if (!"KafkaUser".equals(user.path("kind").asText())) {
                    continue;
                }
                List<String> acls = new ArrayList<>();
                for (JsonNode rule : user.at("/spec/authorization/acls")) {
                    JsonNode resource = rule.path("resource");
                    assertThat(resource.path("patternType").asText("literal")).isEqualTo("literal");
                    for (JsonNode operation : rule.path("operations")) {
                        acls.add(operation.asText() + " " + resource.path("type").asText() + " " + resource.path("name").asText());
                    }
                }
                users.put(user.at("/metadata/name").asText(), acls);
            }
        }
        return users;
    }

    /** deploy/stack/topics.txt: "name partitions" a line. */
    private static Map<String, Integer> topicsFile(Path file) throws Exception {
        Map<String, Integer> topics = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            String[] fields = line.replaceAll("#.*", "").trim().split("\\s+");
            if (fields.length == 2) {
                topics.put(fields[0], Integer.valueOf(fields[1]));
            }
        }
        return topics;
    }
}
