package dev.ordersaga.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.sandbox.SandboxClient.Answer;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CarrierSandboxTest {

    CarrierSandbox sandbox;
    SandboxClient client;

    @BeforeEach
    void start() {
        sandbox = CarrierSandbox.start(0);
        client = new SandboxClient(sandbox.baseUrl());
    }

    @AfterEach
    void stop() {
        sandbox.close();
    }

    static String shipment(String reference, String line1) {
        return """
                {"reference": "%s", "address": {"name": "Ada Lovelace", "line1": "%s", "line2": null,
                 "city": "London", "postalCode": "NW1", "country": "GB"}}""".formatted(reference, line1);
    }

    static String shipment() {
        return shipment("order-1", "12 St James's Square");
    }

    static String key() {
        return UUID.randomUUID().toString();
    }

    void outage(int failures) {
        assertThat(client.post("/sandbox/carrier/outage", null, "{\"failures\": " + failures + "}").status())
                .isEqualTo(200);
    }

    @Test
    void createsAShipment() {
        Answer answer = client.post("/v1/shipments", key(), shipment());

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.body().get("shipmentId").asText()).startsWith("shp_");
        assertThat(answer.body().get("status").asText()).isEqualTo("created");
    }

    @Test
    void sameKeyTwiceGivesTheSameShipment() {
        String key = key();
        Answer first = client.post("/v1/shipments", key, shipment());
        Answer second = client.post("/v1/shipments", key, shipment());

        assertThat(second.status()).isEqualTo(201);
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(client.ledger().get("shipments")).hasSize(1);
    }

    @Test
    void aKeyReusedForAnotherOrdersShipmentIs422AndCreatesNothingMore() {
        String key = key();
        client.post("/v1/shipments", key, shipment("order-1", "12 St James's Square"));

        Answer refused = client.post("/v1/shipments", key, shipment("order-2", "12 St James's Square"));

        assertThat(refused.status()).isEqualTo(422);
        assertThat(refused.body().get("error").asText()).isEqualTo("idempotency key " + key
                + " was used with another request");
        assertThat(client.ledger().get("shipments")).hasSize(1);
    }

    @Test
    void theLedgerCountsTheCreateCallsAndStatusQueriesOfEachKey() {
        String twice = key();
        String once = key();
        client.post("/v1/shipments", twice, shipment());
        client.post("/v1/shipments", twice, shipment());
        client.post("/v1/shipments", once, shipment());
        client.get("/v1/shipments/" + once);
        client.get("/v1/shipments/" + once);

        JsonNode shipments = client.ledger().get("shipments");
        assertThat(shipments.findValuesAsText("idempotencyKey")).containsExactly(twice, once);
        assertThat(shipments.get(0).get("createCalls").asInt()).isEqualTo(2);
        assertThat(shipments.get(0).get("statusQueries").asInt()).isZero();
        assertThat(shipments.get(1).get("createCalls").asInt()).isEqualTo(1);
        assertThat(shipments.get(1).get("statusQueries").asInt()).isEqualTo(2);
        assertThat(client.get("/v1/shipments/" + once).body().has("createCalls"))
                .as("the counts are the sandbox's, not the carrier's API").isFalse();
    }

    @Test
    void sameKeyRacedByManyCallsMakesOneShipment() {
        String key = key();
        ExecutorService callers = Executors.newFixedThreadPool(16);
        try {
            List<CompletableFuture<Answer>> answers = IntStream.range(0, 32)
                    .mapToObj(i -> CompletableFuture.supplyAsync(
                            () -> client.post("/v1/shipments", key, shipment()), callers))
                    .toList();

            assertThat(answers.stream().map(CompletableFuture::join)
                    .map(answer -> answer.body().get("shipmentId").asText()).distinct()).hasSize(1);
            assertThat(client.ledger().get("shipments")).hasSize(1);
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void undeliverableAddressIsRejectedEveryTimeAndCreatesNothing() {
        String key = key();
        for (int call = 0; call < 3; call++) {
            Answer answer = client.post("/v1/shipments", key, shipment("order-1", "UNDELIVERABLE"));

            assertThat(answer.status()).isEqualTo(422);
            assertThat(answer.body().get("status").asText()).isEqualTo("rejected");
            assertThat(answer.body().get("reason").asText()).isEqualTo("address undeliverable");
        }
        assertThat(client.ledger().get("shipments")).isEmpty();
        assertThat(client.get("/v1/shipments/" + key).status()).isEqualTo(404);
    }

    @Test
    void anOutageOfNFailsTheNextNCreatesThenRecovers() {
        outage(3);
        String key = key();

        for (int call = 0; call < 3; call++) {
            Answer answer = client.post("/v1/shipments", key, shipment());
            assertThat(answer.status()).isEqualTo(503);
            assertThat(answer.body().get("error").asText()).isNotBlank();
            assertThat(client.ledger().get("shipments")).isEmpty();
        }
        Answer created = client.post("/v1/shipments", key, shipment());

        assertThat(created.status()).isEqualTo(201);
        assertThat(client.ledger().get("shipments")).hasSize(1);
    }

    @Test
    void anOutageOfOneReferenceFailsOnlyItsCreatesAndAGlobalEndEndsIt() {
        assertThat(client.post("/sandbox/carrier/outage", null, "{\"failures\": 2, \"reference\": \"order-7\"}")
                .status()).isEqualTo(200);
        String key = key();

        assertThat(client.post("/v1/shipments", key(), shipment("order-8", "1 Main St")).status())
                .as("another order's create goes through").isEqualTo(201);
        assertThat(client.post("/v1/shipments", key, shipment("order-7", "1 Main St")).status()).isEqualTo(503);
        assertThat(client.post("/v1/shipments", key, shipment("order-7", "1 Main St")).status()).isEqualTo(503);
        assertThat(client.post("/v1/shipments", key, shipment("order-7", "1 Main St")).status()).isEqualTo(201);

        assertThat(client.post("/sandbox/carrier/outage", null, "{\"failures\": 5, \"reference\": \"order-9\"}")
                .status()).isEqualTo(200);
        outage(0);
        assertThat(client.post("/v1/shipments", key(), shipment("order-9", "1 Main St")).status())
                .as("failures 0 ends the outages of one reference too").isEqualTo(201);
        assertThat(client.post("/sandbox/carrier/outage", null, "{\"failures\": 1, \"reference\": \" \"}").status())
                .isEqualTo(400);
    }

    @Test
    void anOutageDoesNotTouchCancelOrTheStatusQuery() {
        String key = key();
        String shipmentId = client.post("/v1/shipments", key, shipment()).body().get("shipmentId").asText();
        outage(5);

        assertThat(client.get("/v1/shipments/" + key).status()).isEqualTo(200);
        assertThat(client.post("/v1/shipments/" + shipmentId + "/cancel", "cancel-" + key, "").status()).isEqualTo(200);
        assertThat(client.post("/v1/shipments", key(), shipment()).status()).isEqualTo(503);
    }

    @Test
    void cancelIsIdempotentAndShowsInTheLedger() {
        String key = key();
        String shipmentId = client.post("/v1/shipments", key, shipment("order-4", "1 Main St"))
                .body().get("shipmentId").asText();

        Answer first = client.post("/v1/shipments/" + shipmentId + "/cancel", "cancel-" + key, "");
        Answer second = client.post("/v1/shipments/" + shipmentId + "/cancel", "cancel-" + key, "");

        assertThat(first.status()).isEqualTo(200);
        assertThat(first.body().get("shipmentId").asText()).isEqualTo(shipmentId);
        assertThat(first.body().get("status").asText()).isEqualTo("cancelled");
        assertThat(second.status()).isEqualTo(200);
        assertThat(second.body()).isEqualTo(first.body());
        JsonNode entry = client.ledger().get("shipments").get(0);
        assertThat(entry.get("shipmentId").asText()).isEqualTo(shipmentId);
        assertThat(entry.get("idempotencyKey").asText()).isEqualTo(key);
        assertThat(entry.get("reference").asText()).isEqualTo("order-4");
        assertThat(entry.get("status").asText()).isEqualTo("cancelled");
    }

    /** As a real carrier's key store does: the first answer under a key, whatever shipment the request names now. */
    @Test
    void aCancelKeyUsedAgainForAnotherShipmentIsAnsweredWithTheShipmentItCancelled() {
        String first = client.post("/v1/shipments", key(), shipment()).body().get("shipmentId").asText();
        String second = client.post("/v1/shipments", key(), shipment()).body().get("shipmentId").asText();
        String cancelKey = "cancel-" + key();

        client.post("/v1/shipments/" + first + "/cancel", cancelKey, "");
        Answer again = client.post("/v1/shipments/" + second + "/cancel", cancelKey, "");

        assertThat(again.status()).isEqualTo(200);
        assertThat(again.body().get("shipmentId").asText()).isEqualTo(first);
        assertThat(client.ledger().get("shipments").findValuesAsText("status")).containsExactly("cancelled", "created");
    }

    @Test
    void theShipmentReportListsTheShipmentsCreatedInOrderWithTheirStatusNow() {
        Instant before = Instant.now();
        String firstKey = key();
        String first = client.post("/v1/shipments", firstKey, shipment()).body().get("shipmentId").asText();
        client.post("/v1/shipments", key(), shipment("order-2", "UNDELIVERABLE"));
        String second = client.post("/v1/shipments", key(), shipment()).body().get("shipmentId").asText();
        client.post("/v1/shipments/" + first + "/cancel", "cancel-" + firstKey, "");

        Answer page = client.get("/v1/reports/shipments?since=" + before + "&limit=1");
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.body().get("shipments").findValuesAsText("shipmentId")).containsExactly(first);
        assertThat(page.body().get("shipments").get(0).get("idempotencyKey").asText()).isEqualTo(firstKey);
        assertThat(page.body().get("shipments").get(0).get("status").asText()).isEqualTo("cancelled");
        assertThat(page.body().get("hasMore").asBoolean()).isTrue();
        Answer rest = client.get("/v1/reports/shipments?cursor=" + page.body().get("next").asText());
        assertThat(rest.body().get("shipments").findValuesAsText("shipmentId")).as("nothing for the rejected one")
                .containsExactly(second);
        assertThat(rest.body().get("shipments").get(0).get("status").asText()).isEqualTo("created");
        assertThat(rest.body().get("hasMore").asBoolean()).isFalse();
        assertThat(client.get("/v1/reports/shipments?cursor=" + page.body().get("next").asText() + "x").status())
                .isEqualTo(400);
    }

    @Test
    void aForgottenKeyIsCreatedAnewAndBothShipmentsStayInTheBooksTheReportAndCancellable() {
        Instant before = Instant.now();
        String key = key();
        String first = client.post("/v1/shipments", key, shipment()).body().get("shipmentId").asText();

        Answer forgotten = client.post("/sandbox/keys/" + key + "/forget", null, "");
        assertThat(forgotten.status()).isEqualTo(200);
        assertThat(forgotten.body().get("shipmentId").asText()).isEqualTo(first);
        assertThat(client.get("/v1/shipments/" + key).status()).as("the status query no longer knows the key").isEqualTo(404);

        String second = client.post("/v1/shipments", key, shipment()).body().get("shipmentId").asText();
        assertThat(second).isNotEqualTo(first);
        assertThat(client.get("/v1/shipments/" + key).body().get("shipmentId").asText())
                .as("the new shipment is the key's from now on").isEqualTo(second);
        assertThat(client.ledger().get("shipments").findValuesAsText("shipmentId")).containsExactly(first, second);

        assertThat(client.post("/v1/shipments/" + first + "/cancel", key(), "").status()).isEqualTo(200);
        JsonNode report = client.get("/v1/reports/shipments?since=" + before).body().get("shipments");
        assertThat(report.findValuesAsText("shipmentId")).containsExactly(first, second);
        assertThat(report.findValuesAsText("status")).containsExactly("cancelled", "created");
        assertThat(client.post("/sandbox/keys/" + key() + "/forget", null, "").status()).isEqualTo(404);
    }

    @Test
    void aForgetfulCarrierForgetsEveryKeyAsSoonAsItCreatesAndAnswersLateUntilSwitchedOff() {
        Answer on = client.post("/sandbox/forgetful", null, "{\"on\": true, \"answerDelayMs\": 400}");
        assertThat(on.status()).isEqualTo(200);
        assertThat(on.body().get("forgetful").asBoolean()).isTrue();
        long anewBefore = on.body().get("createdUnderForgottenKeys").asLong();
        String key = key();

        assertThatThrownBy(() -> client.postOrThrow("/v1/shipments", key, shipment(), Duration.ofMillis(150)))
                .as("answered late").isInstanceOf(HttpTimeoutException.class);
        assertThat(client.get("/v1/shipments/" + key).status()).as("forgotten at once").isEqualTo(404);
        String second = client.post("/v1/shipments", key, shipment(), Duration.ofSeconds(5)).body().get("shipmentId")
                .asText();
        assertThat(client.get("/sandbox/forgetful").body().get("createdUnderForgottenKeys").asLong())
                .isEqualTo(anewBefore + 1);

        Answer off = client.post("/sandbox/forgetful", null, "{\"on\": false}");
        assertThat(off.body().get("forgetful").asBoolean()).isFalse();
        String third = client.post("/v1/shipments", key, shipment(), Duration.ofMillis(300)).body().get("shipmentId")
                .asText();
        assertThat(client.post("/v1/shipments", key, shipment()).body().get("shipmentId").asText())
                .as("remembered again").isEqualTo(third);
        assertThat(client.ledger().get("shipments").findValuesAsText("shipmentId")).hasSize(3).contains(second, third)
                .doesNotHaveDuplicates();
        assertThat(client.get("/sandbox/forgetful").body().get("createdUnderForgottenKeys").asLong())
                .isEqualTo(anewBefore + 2);
        assertThat(client.post("/sandbox/forgetful", null, "{\"on\": true}").status()).isEqualTo(400);
    }

    /** A parcel handed to the courier at once: its cancel is refused, now and under any key, and it stays live. */
    @Test
    void cancelOfAnUncancellableShipmentIsRefused() {
        String key = key();
        String shipmentId = client.post("/v1/shipments", key, shipment("order-5", "UNCANCELLABLE"))
                .body().get("shipmentId").asText();

        Answer first = client.post("/v1/shipments/" + shipmentId + "/cancel", "cancel-" + key, "");
        Answer again = client.post("/v1/shipments/" + shipmentId + "/cancel", "cancel-" + key(), "");

        assertThat(first.status()).isEqualTo(422);
        assertThat(first.body().get("error").asText()).contains(shipmentId).contains("too late to cancel");
        assertThat(again.status()).isEqualTo(422);
        assertThat(client.ledger().get("shipments").get(0).get("status").asText()).isEqualTo("created");
    }

    @Test
    void cancelOfAnUnknownShipmentIs404() {
        assertThat(client.post("/v1/shipments/shp_unknown/cancel", key(), "").status()).isEqualTo(404);
    }

    @Test
    void statusQueryAnswersTheShipmentOfAKey() {
        String key = key();
        String shipmentId = client.post("/v1/shipments", key, shipment("order-2", "1 Main St"))
                .body().get("shipmentId").asText();

        Answer status = client.get("/v1/shipments/" + key);

        assertThat(status.status()).isEqualTo(200);
        assertThat(status.body().get("shipmentId").asText()).isEqualTo(shipmentId);
        assertThat(status.body().get("idempotencyKey").asText()).isEqualTo(key);
        assertThat(status.body().get("reference").asText()).isEqualTo("order-2");
        assertThat(status.body().get("status").asText()).isEqualTo("created");
        assertThat(client.get("/v1/shipments/" + key()).status()).isEqualTo(404);
    }

    @Test
    void createWithoutIdempotencyKeyOrAddressIs400() {
        assertThat(client.post("/v1/shipments", null, shipment()).status()).isEqualTo(400);
        assertThat(client.post("/v1/shipments", key(), "{\"reference\": \"order-1\"}").status()).isEqualTo(400);
        assertThat(client.post("/v1/shipments", key(), "null").status()).as("a body that is JSON's null").isEqualTo(400);
        assertThat(client.ledger().get("shipments")).isEmpty();
    }

    @Test
    void outageRejectsANegativeCount() {
        assertThat(client.post("/sandbox/carrier/outage", null, "{\"failures\": -1}").status()).isEqualTo(400);
    }

    @Test
    void slowModeDelaysCarrierAnswersUntilTurnedOff() {
        client.slow(2000);

        assertThatThrownBy(() -> client.postOrThrow("/v1/shipments", key(), shipment(), Duration.ofMillis(300)))
                .isInstanceOf(HttpTimeoutException.class);
        client.slow(0);

        assertThat(client.post("/v1/shipments", key(), shipment(), Duration.ofMillis(1500)).status()).isEqualTo(201);
        assertThat(client.ledger().get("shipments")).hasSize(2);
    }
}
