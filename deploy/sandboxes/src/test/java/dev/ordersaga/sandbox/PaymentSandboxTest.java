package dev.ordersaga.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.sandbox.SandboxClient.Answer;
import java.net.http.HttpResponse;
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

class PaymentSandboxTest {

    static final Duration TIMEOUT_DELAY = Duration.ofMillis(1500);
    static final Duration SHORT_CLIENT_TIMEOUT = Duration.ofMillis(300);

    PaymentSandbox sandbox;
    SandboxClient client;

    @BeforeEach
    void start() {
        sandbox = PaymentSandbox.start(0, null, TIMEOUT_DELAY);
        client = new SandboxClient(sandbox.baseUrl());
    }

    @AfterEach
    void stop() {
        sandbox.close();
    }

    static String charge(String token, String amount, String reference) {
        return """
                {"amount": %s, "currency": "EUR", "token": "%s", "reference": "%s"}""".formatted(amount, token, reference);
    }

    static String charge(String token) {
        return charge(token, "21.00", "order-1");
    }

    static String refund(String chargeId, String amount) {
        return """
                {"chargeId": "%s", "amount": %s, "currency": "EUR", "reference": "order-1"}""".formatted(chargeId, amount);
    }

    static String key() {
        return UUID.randomUUID().toString();
    }

    @Test
    void baseUrlIsLoopbackWithThePort() {
        assertThat(sandbox.baseUrl()).matches("http://127\\.0\\.0\\.1:\\d+");
    }

    @Test
    void okTokenChargesAndAnswers201() {
        Answer answer = client.post("/v1/charges", key(), charge("tok_ok", "21.00", "order-7"));

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.body().get("chargeId").asText()).startsWith("ch_");
        assertThat(answer.body().get("status").asText()).isEqualTo("succeeded");
        assertThat(answer.body().get("amount").decimalValue()).isEqualByComparingTo("21.00");
        assertThat(answer.raw()).contains("\"amount\":21.00");
        assertThat(answer.body().get("currency").asText()).isEqualTo("EUR");
        assertThat(answer.body().get("reference").asText()).isEqualTo("order-7");
    }

    @Test
    void declinedTokenAnswers402WithAReason() {
        Answer answer = client.post("/v1/charges", key(), charge("tok_declined"));

        assertThat(answer.status()).isEqualTo(402);
        assertThat(answer.body().get("status").asText()).isEqualTo("declined");
        assertThat(answer.body().get("reason").asText()).isEqualTo("card declined");
    }

    @Test
    void anyOtherTokenIsDeclined() {
        Answer answer = client.post("/v1/charges", key(), charge("tok_whatever"));

        assertThat(answer.status()).isEqualTo(402);
        assertThat(answer.body().get("status").asText()).isEqualTo("declined");
        assertThat(client.ledger().get("charges").get(0).get("status").asText()).isEqualTo("declined");
    }

    @Test
    void refundFailsTwiceTokenChargesLikeOk() {
        Answer answer = client.post("/v1/charges", key(), charge("tok_refund_fails_twice"));

        assertThat(answer.status()).isEqualTo(201);
        assertThat(answer.body().get("status").asText()).isEqualTo("succeeded");
    }

    @Test
    void sameKeyTwiceMakesOneChargeAndTheSameAnswer() {
        String key = key();
        Answer first = client.post("/v1/charges", key, charge("tok_ok"));
        Answer second = client.post("/v1/charges", key, charge("tok_ok"));

        assertThat(second.status()).isEqualTo(201);
        assertThat(second.body()).isEqualTo(first.body());
        JsonNode charges = client.ledger().get("charges");
        assertThat(charges).hasSize(1);
        assertThat(charges.get(0).get("chargeId").asText()).isEqualTo(first.body().get("chargeId").asText());
    }

    @Test
    void theLedgerCountsTheChargeCallsAndStatusQueriesOfEachKey() {
        String twice = key();
        String once = key();
        client.post("/v1/charges", twice, charge("tok_ok"));
        client.post("/v1/charges", twice, charge("tok_ok"));
        client.post("/v1/charges", once, charge("tok_declined"));
        client.get("/v1/charges/" + once);
        client.get("/v1/charges/" + once);
        client.get("/v1/charges/" + key());

        JsonNode charges = client.ledger().get("charges");
        assertThat(charges.findValuesAsText("idempotencyKey")).containsExactly(twice, once);
        assertThat(charges.get(0).get("chargeCalls").asInt()).isEqualTo(2);
        assertThat(charges.get(0).get("statusQueries").asInt()).isZero();
        assertThat(charges.get(1).get("chargeCalls").asInt()).isEqualTo(1);
        assertThat(charges.get(1).get("statusQueries").asInt()).isEqualTo(2);
    }

    @Test
    void aStatusQueryBeforeTheChargeCountsOnceTheKeyIsCharged() {
        String key = key();
        assertThat(client.get("/v1/charges/" + key).status()).isEqualTo(404);
        client.post("/v1/charges", key, charge("tok_ok"));

        assertThat(client.ledger().get("charges").get(0).get("statusQueries").asInt()).isEqualTo(1);
    }

    @Test
    void aKeyReusedForAnotherChargeIs422AndChargesNothingMore() {
        String key = key();
        Answer first = client.post("/v1/charges", key, charge("tok_ok", "21.00", "order-1"));
        Answer sameAmountOtherScale = client.post("/v1/charges", key, charge("tok_ok", "21.0", "order-1"));

        Answer otherAmount = client.post("/v1/charges", key, charge("tok_ok", "22.00", "order-1"));
        Answer otherToken = client.post("/v1/charges", key, charge("tok_declined", "21.00", "order-1"));
        Answer otherOrder = client.post("/v1/charges", key, charge("tok_ok", "21.00", "order-2"));

        assertThat(sameAmountOtherScale.body()).as("the same amount").isEqualTo(first.body());
        assertThat(List.of(otherAmount, otherToken, otherOrder)).allSatisfy(refused -> {
            assertThat(refused.status()).isEqualTo(422);
            assertThat(refused.body().get("error").asText()).isEqualTo("idempotency key " + key
                    + " was used with another request");
        });
        JsonNode charges = client.ledger().get("charges");
        assertThat(charges).hasSize(1);
        assertThat(charges.get(0).get("amount").decimalValue()).isEqualByComparingTo("21.00");
    }

    @Test
    void sameKeyDeclinedTwiceAnswersTheSameDecline() {
        String key = key();
        Answer first = client.post("/v1/charges", key, charge("tok_declined"));
        Answer second = client.post("/v1/charges", key, charge("tok_declined"));

        assertThat(second.status()).isEqualTo(402);
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(client.ledger().get("charges")).hasSize(1);
    }

    @Test
    void sameKeyRacedByManyCallsMakesOneCharge() throws Exception {
        String key = key();
        ExecutorService callers = Executors.newFixedThreadPool(16);
        try {
            List<CompletableFuture<Answer>> answers = IntStream.range(0, 32)
                    .mapToObj(i -> CompletableFuture.supplyAsync(
                            () -> client.post("/v1/charges", key, charge("tok_ok")), callers))
                    .toList();

            List<String> chargeIds = answers.stream().map(CompletableFuture::join)
                    .map(answer -> answer.body().get("chargeId").asText()).distinct().toList();
            assertThat(chargeIds).hasSize(1);
            assertThat(client.ledger().get("charges")).hasSize(1);
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void chargeWithoutIdempotencyKeyIs400AndChargesNothing() {
        Answer answer = client.post("/v1/charges", null, charge("tok_ok"));

        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.body().get("error").asText()).contains("Idempotency-Key");
        assertThat(client.ledger().get("charges")).isEmpty();
    }

    @Test
    void chargeWithoutAmountOrWithBadJsonIs400() {
        Answer noAmount = client.post("/v1/charges", key(), "{\"currency\": \"EUR\", \"token\": \"tok_ok\"}");
        Answer badJson = client.post("/v1/charges", key(), "{\"amount\": ");

        assertThat(noAmount.status()).isEqualTo(400);
        assertThat(noAmount.body().get("error").asText()).contains("amount");
        assertThat(badJson.status()).isEqualTo(400);
        assertThat(client.ledger().get("charges")).isEmpty();
    }

    @Test
    void statusQueryAnswersTheChargeOfAKey() {
        String key = key();
        Answer charged = client.post("/v1/charges", key, charge("tok_ok", "21.00", "order-9"));

        Answer status = client.get("/v1/charges/" + key);

        assertThat(status.status()).isEqualTo(200);
        assertThat(status.body().get("chargeId").asText()).isEqualTo(charged.body().get("chargeId").asText());
        assertThat(status.body().get("status").asText()).isEqualTo("succeeded");
        assertThat(status.body().get("amount").decimalValue()).isEqualByComparingTo("21.00");
        assertThat(status.body().get("currency").asText()).isEqualTo("EUR");
        assertThat(status.body().get("reference").asText()).isEqualTo("order-9");
        assertThat(status.body().get("idempotencyKey").asText()).isEqualTo(key);
    }

    @Test
    void statusQueryOfAnUnseenKeyIs404() {
        Answer status = client.get("/v1/charges/" + key());

        assertThat(status.status()).isEqualTo(404);
        assertThat(status.body().get("error").asText()).isNotBlank();
    }

    @Test
    void timeoutSucceedsTokenChargesAtOnceButAnswersAfterTheCallerGaveUp() {
        String key = key();

        assertThatThrownBy(() -> client.postOrThrow("/v1/charges", key, charge("tok_timeout_succeeds"),
                SHORT_CLIENT_TIMEOUT)).isInstanceOf(HttpTimeoutException.class);

        Answer status = client.get("/v1/charges/" + key);
        assertThat(status.status()).isEqualTo(200);
        assertThat(status.body().get("status").asText()).isEqualTo("succeeded");
        assertThat(client.ledger().get("charges")).hasSize(1);
    }

    @Test
    void timeoutDeclinedTokenDeclinesAtOnceButAnswersAfterTheCallerGaveUp() {
        String key = key();

        assertThatThrownBy(() -> client.postOrThrow("/v1/charges", key, charge("tok_timeout_declined"),
                SHORT_CLIENT_TIMEOUT)).isInstanceOf(HttpTimeoutException.class);

        Answer status = client.get("/v1/charges/" + key);
        assertThat(status.status()).isEqualTo(200);
        assertThat(status.body().get("status").asText()).isEqualTo("declined");
    }

    @Test
    void timeoutTokenAnswersAfterTheDelayToAPatientCaller() {
        long started = System.nanoTime();
        Answer answer = client.post("/v1/charges", key(), charge("tok_timeout_succeeds"));

        assertThat(answer.status()).isEqualTo(201);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(TIMEOUT_DELAY);
    }

    @Test
    void repeatingATimedOutChargeWithTheSameKeyAnswersAtOnceWithTheSameCharge() {
        String key = key();
        assertThatThrownBy(() -> client.postOrThrow("/v1/charges", key, charge("tok_timeout_succeeds"),
                SHORT_CLIENT_TIMEOUT)).isInstanceOf(HttpTimeoutException.class);

        Answer repeated = client.post("/v1/charges", key, charge("tok_timeout_succeeds"), Duration.ofMillis(1000));

        assertThat(repeated.status()).isEqualTo(201);
        assertThat(repeated.body().get("chargeId").asText())
                .isEqualTo(client.get("/v1/charges/" + key).body().get("chargeId").asText());
        assertThat(client.ledger().get("charges")).hasSize(1);
    }

    @Test
    void aHeldBackAnswerDoesNotHoldBackOtherCalls() {
        try (PaymentSandbox patient = PaymentSandbox.start(0, null, Duration.ofSeconds(30))) {
            SandboxClient patientClient = new SandboxClient(patient.baseUrl());
            CompletableFuture<HttpResponse<String>> late = patientClient.postAsync("/v1/charges", key(),
                    charge("tok_timeout_succeeds"));
            await().atMost(Duration.ofSeconds(5)).until(() -> patientClient.ledger().get("charges").size() == 1);

            Answer quick = patientClient.post("/v1/charges", key(), charge("tok_ok"), Duration.ofSeconds(5));

            assertThat(quick.status()).isEqualTo(201);
            assertThat(late).isNotDone();
        }
    }

    @Test
    void refundAnswers201AndSameKeyGivesTheSameRefund() {
        String chargeId = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();
        String refundKey = "refund-" + key();

        Answer first = client.post("/v1/refunds", refundKey, refund(chargeId, "21.00"));
        Answer second = client.post("/v1/refunds", refundKey, refund(chargeId, "21.00"));

        assertThat(first.status()).isEqualTo(201);
        assertThat(first.body().get("refundId").asText()).startsWith("re_");
        assertThat(first.body().get("status").asText()).isEqualTo("succeeded");
        assertThat(second.status()).isEqualTo(201);
        assertThat(second.body()).isEqualTo(first.body());
        JsonNode refunds = client.ledger().get("refunds");
        assertThat(refunds).hasSize(1);
        assertThat(refunds.get(0).get("refundId").asText()).isEqualTo(first.body().get("refundId").asText());
        assertThat(refunds.get(0).get("idempotencyKey").asText()).isEqualTo(refundKey);
        assertThat(refunds.get(0).get("chargeId").asText()).isEqualTo(chargeId);
        assertThat(refunds.get(0).get("reference").asText()).isEqualTo("order-1");
        assertThat(refunds.get(0).get("amount").decimalValue()).isEqualByComparingTo("21.00");
        assertThat(refunds.get(0).get("currency").asText()).isEqualTo("EUR");
    }

    @Test
    void aKeyReusedForAnotherRefundIs422AndRefundsNothingMore() {
        String chargeId = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();
        String otherChargeId = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();
        String refundKey = "refund-" + key();
        client.post("/v1/refunds", refundKey, refund(chargeId, "5.00"));

        Answer otherAmount = client.post("/v1/refunds", refundKey, refund(chargeId, "6.00"));
        Answer otherCharge = client.post("/v1/refunds", refundKey, refund(otherChargeId, "5.00"));

        assertThat(otherAmount.status()).isEqualTo(422);
        assertThat(otherCharge.status()).isEqualTo(422);
        assertThat(otherCharge.body().get("error").asText()).contains("was used with another request");
        assertThat(client.ledger().get("refunds")).hasSize(1);
    }

    @Test
    void refundOverWhatIsLeftIs422() {
        String chargeId = client.post("/v1/charges", key(), charge("tok_ok", "21.00", "order-1"))
                .body().get("chargeId").asText();

        Answer part = client.post("/v1/refunds", key(), refund(chargeId, "15.00"));
        Answer tooMuch = client.post("/v1/refunds", key(), refund(chargeId, "6.01"));
        Answer rest = client.post("/v1/refunds", key(), refund(chargeId, "6.00"));

        assertThat(part.status()).isEqualTo(201);
        assertThat(tooMuch.status()).isEqualTo(422);
        assertThat(tooMuch.body().get("error").asText()).contains("6.00");
        assertThat(rest.status()).isEqualTo(201);
        assertThat(client.ledger().get("refunds")).hasSize(2);
    }

    @Test
    void refundOfADeclinedChargeIs422() {
        String key = key();
        client.post("/v1/charges", key, charge("tok_declined"));
        String chargeId = client.get("/v1/charges/" + key).body().get("chargeId").asText();

        assertThat(client.post("/v1/refunds", key(), refund(chargeId, "1.00")).status()).isEqualTo(422);
    }

    @Test
    void refundOfAnUnknownChargeIs404AndWithoutKeyIs400() {
        String chargeId = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();

        assertThat(client.post("/v1/refunds", key(), refund("ch_unknown", "1.00")).status()).isEqualTo(404);
        assertThat(client.post("/v1/refunds", null, refund(chargeId, "1.00")).status()).isEqualTo(400);
        assertThat(client.ledger().get("refunds")).isEmpty();
    }

    @Test
    void refundFailsTwiceTokenAnswers503TwiceThenRefunds() {
        String chargeId = client.post("/v1/charges", key(), charge("tok_refund_fails_twice"))
                .body().get("chargeId").asText();
        String refundKey = "refund-" + key();

        Answer first = client.post("/v1/refunds", refundKey, refund(chargeId, "21.00"));
        Answer second = client.post("/v1/refunds", refundKey, refund(chargeId, "21.00"));
        assertThat(client.ledger().get("refunds")).isEmpty();
        Answer third = client.post("/v1/refunds", refundKey, refund(chargeId, "21.00"));

        assertThat(first.status()).isEqualTo(503);
        assertThat(first.body().get("error").asText()).isNotBlank();
        assertThat(second.status()).isEqualTo(503);
        assertThat(third.status()).isEqualTo(201);
        assertThat(client.ledger().get("refunds")).hasSize(1);
    }

    @Test
    void refundRefusedTokenChargesAndRefusesEveryRefundWith422() {
        Answer charged = client.post("/v1/charges", key(), charge("tok_refund_refused"));
        assertThat(charged.status()).isEqualTo(201);
        assertThat(charged.body().get("status").asText()).isEqualTo("succeeded");
        String chargeId = charged.body().get("chargeId").asText();

        for (String refundKey : List.of("refund-" + key(), "refund-" + key(), "refund-" + key())) {
            Answer refused = client.post("/v1/refunds", refundKey, refund(chargeId, "21.00"));
            assertThat(refused.status()).isEqualTo(422);
            assertThat(refused.body().get("error").asText()).contains(chargeId, "disputed");
        }
        assertThat(client.ledger().get("refunds")).isEmpty();
    }

    @Test
    void ledgerListsChargesWithTheirTokens() {
        String key = key();
        String chargeId = client.post("/v1/charges", key, charge("tok_ok", "21.00", "order-3"))
                .body().get("chargeId").asText();

        JsonNode entry = client.ledger().get("charges").get(0);

        assertThat(entry.get("chargeId").asText()).isEqualTo(chargeId);
        assertThat(entry.get("idempotencyKey").asText()).isEqualTo(key);
        assertThat(entry.get("reference").asText()).isEqualTo("order-3");
        assertThat(entry.get("amount").decimalValue()).isEqualByComparingTo("21.00");
        assertThat(entry.get("currency").asText()).isEqualTo("EUR");
        assertThat(entry.get("status").asText()).isEqualTo("succeeded");
        assertThat(entry.get("token").asText()).isEqualTo("tok_ok");
    }

    @Test
    void theSettlementReportListsSucceededChargesAndLateSettlementsInTheOrderTheySettledPageByPage() {
        Instant before = Instant.now();
        String first = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();
        String declinedKey = key();
        client.post("/v1/charges", declinedKey, charge("tok_declined"));
        String declined = client.get("/v1/charges/" + declinedKey).body().get("chargeId").asText();
        String second = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();
        assertThat(client.post("/sandbox/charges/" + declined + "/settle-late", null, "").status()).isEqualTo(200);

        Answer page = client.get("/v1/reports/settlements?since=" + before + "&limit=2");
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.body().get("settlements").findValuesAsText("chargeId")).containsExactly(first, second);
        assertThat(page.body().get("hasMore").asBoolean()).isTrue();
        Answer rest = client.get("/v1/reports/settlements?cursor=" + page.body().get("next").asText() + "&limit=2");
        assertThat(rest.body().get("settlements").findValuesAsText("chargeId")).containsExactly(declined);
        assertThat(rest.body().get("settlements").get(0).get("idempotencyKey").asText()).isEqualTo(declinedKey);
        assertThat(rest.body().get("hasMore").asBoolean()).isFalse();
        Answer none = client.get("/v1/reports/settlements?cursor=" + rest.body().get("next").asText());
        assertThat(none.body().get("settlements")).isEmpty();
        assertThat(none.body().get("next").asText()).as("a reader that keeps it reads on from the end")
                .isEqualTo(rest.body().get("next").asText());

        assertThat(client.get("/v1/reports/settlements?since=" + Instant.now().plusSeconds(60)).body().get("settlements")).isEmpty();
        assertThat(client.get("/v1/reports/settlements?cursor=an-earlier-run.57").body().get("settlements")
                .findValuesAsText("chargeId")).as("all of this run is news to a reader of an earlier one")
                .containsExactly(first, second, declined);
        assertThat(client.get("/v1/reports/settlements").status()).isEqualTo(400);
        assertThat(client.get("/v1/reports/settlements?since=yesterday").status()).isEqualTo(400);
        assertThat(client.get("/v1/reports/settlements?cursor=0&limit=0").status()).isEqualTo(400);
    }

    @Test
    void settleLateOfASucceededChargeIs409AndOfAnUnknownOne404() {
        String chargeId = client.post("/v1/charges", key(), charge("tok_ok")).body().get("chargeId").asText();

        assertThat(client.post("/sandbox/charges/" + chargeId + "/settle-late", null, "").status()).isEqualTo(409);
        assertThat(client.post("/sandbox/charges/ch_unknown/settle-late", null, "").status()).isEqualTo(404);
    }

    @Test
    void aForgottenKeyIsChargedAnewAndBothChargesStayInTheBooksTheReportAndRefundable() {
        Instant before = Instant.now();
        String key = key();
        String first = client.post("/v1/charges", key, charge("tok_ok")).body().get("chargeId").asText();

        Answer forgotten = client.post("/sandbox/keys/" + key + "/forget", null, "");
        assertThat(forgotten.status()).isEqualTo(200);
        assertThat(forgotten.body().get("chargeId").asText()).isEqualTo(first);
        assertThat(client.get("/v1/charges/" + key).status()).as("the status query no longer knows the key").isEqualTo(404);

        Answer again = client.post("/v1/charges", key, charge("tok_ok"));
        assertThat(again.status()).isEqualTo(201);
        String second = again.body().get("chargeId").asText();
        assertThat(second).isNotEqualTo(first);
        assertThat(client.post("/v1/charges", key, charge("tok_ok")).body().get("chargeId").asText())
                .as("the new charge is the key's from now on").isEqualTo(second);
        assertThat(client.ledger().get("charges").findValuesAsText("chargeId")).containsExactly(first, second);
        assertThat(client.get("/v1/reports/settlements?since=" + before).body().get("settlements")
                .findValuesAsText("chargeId")).containsExactly(first, second);

        assertThat(client.post("/v1/refunds", key(), refund(first, "21.00")).status()).isEqualTo(201);
        assertThat(client.post("/v1/refunds", key(), refund(second, "21.00")).status()).isEqualTo(201);
        assertThat(client.post("/v1/refunds", key(), refund(first, "0.01")).status()).as("refunded in full")
                .isEqualTo(422);
        assertThat(client.post("/sandbox/keys/" + key() + "/forget", null, "").status()).isEqualTo(404);
    }

    @Test
    void aForgetfulProviderForgetsEveryKeyAsSoonAsItChargesUntilSwitchedOff() {
        Instant before = Instant.now();
        Answer on = client.post("/sandbox/forgetful", null, "{\"on\": true}");
        assertThat(on.status()).isEqualTo(200);
        assertThat(on.body().get("forgetful").asBoolean()).isTrue();
        long anewBefore = on.body().get("chargedUnderForgottenKeys").asLong();
        String key = key();

        String first = client.post("/v1/charges", key, charge("tok_ok")).body().get("chargeId").asText();
        assertThat(client.get("/v1/charges/" + key).status()).as("forgotten at once").isEqualTo(404);
        String second = client.post("/v1/charges", key, charge("tok_ok")).body().get("chargeId").asText();
        assertThat(second).isNotEqualTo(first);
        assertThat(client.get("/sandbox/forgetful").body().get("chargedUnderForgottenKeys").asLong())
                .isEqualTo(anewBefore + 1);

        Answer off = client.post("/sandbox/forgetful", null, "{\"on\": false}");
        assertThat(off.body().get("forgetful").asBoolean()).isFalse();
        String third = client.post("/v1/charges", key, charge("tok_ok")).body().get("chargeId").asText();
        assertThat(client.post("/v1/charges", key, charge("tok_ok")).body().get("chargeId").asText())
                .as("remembered again").isEqualTo(third);
        assertThat(client.get("/v1/charges/" + key).body().get("chargeId").asText()).isEqualTo(third);
        assertThat(client.get("/sandbox/forgetful").body().get("chargedUnderForgottenKeys").asLong())
                .isEqualTo(anewBefore + 2);
        assertThat(client.get("/v1/reports/settlements?since=" + before).body().get("settlements")
                .findValuesAsText("chargeId")).containsExactly(first, second, third);
        assertThat(client.post("/v1/refunds", key(), refund(first, "21.00")).status()).as("refundable").isEqualTo(201);
        assertThat(client.post("/sandbox/forgetful", null, "{}").status()).isEqualTo(400);
    }

    @Test
    void slowModeDelaysEveryProviderAnswerButNotTheSandboxEndpoints() {
        long slowedBefore = client.slow(2000);

        assertThatThrownBy(() -> client.postOrThrow("/v1/charges", key(), charge("tok_ok"), SHORT_CLIENT_TIMEOUT))
                .isInstanceOf(HttpTimeoutException.class);
        assertThat(client.ledger().get("charges")).hasSize(1);
        String key = client.ledger().get("charges").get(0).get("idempotencyKey").asText();
        assertThatThrownBy(() -> client.getOrThrow("/v1/charges/" + key, SHORT_CLIENT_TIMEOUT))
                .isInstanceOf(HttpTimeoutException.class);
        assertThat(client.slowedAnswers()).as("the charge's and the status's answers, not the ledger's")
                .isEqualTo(slowedBefore + 2);
        // the report is slowed too, but read on a schedule whatever the load: no call of an order went unanswered
        assertThatThrownBy(() -> client.getOrThrow("/v1/reports/settlements", SHORT_CLIENT_TIMEOUT))
                .isInstanceOf(HttpTimeoutException.class);
        assertThat(client.slowedAnswers()).as("not the report's").isEqualTo(slowedBefore + 2);

        assertThat(client.slow(0)).isEqualTo(slowedBefore + 2);

        assertThat(client.post("/v1/charges", key(), charge("tok_ok"), Duration.ofMillis(1500)).status())
                .isEqualTo(201);
        assertThat(client.slowedAnswers()).as("none once the delay is off").isEqualTo(slowedBefore + 2);
    }

    @Test
    void slowModeRejectsANegativeDelay() {
        assertThat(client.post("/sandbox/slow", null, "{\"delayMs\": -1}").status()).isEqualTo(400);
    }

    @Test
    void unknownEndpointIsAJson404() {
        Answer answer = client.get("/v2/nothing");

        assertThat(answer.status()).isEqualTo(404);
        assertThat(answer.body().get("error").asText()).contains("/v2/nothing");
    }
}
