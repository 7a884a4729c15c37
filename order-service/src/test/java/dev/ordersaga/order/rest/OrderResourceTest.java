package dev.ordersaga.order.rest;

import dev.ordersaga.eventing.EventHeaders;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCreated;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.Topics;
import dev.ordersaga.order.testing.OrderRows;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.Orders;
import dev.ordersaga.testing.RawHttp;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import javax.sql.DataSource;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.endsWith;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.oneOf;

@QuarkusTest
@WithTestResource(StackTestResource.class)
class OrderResourceTest {

    private static KafkaTopicProbe orderEvents;

    @BeforeAll
    static void watchTopic() {
        orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
    }

    @AfterAll
    static void stopWatching() {
        orderEvents.close();
    }

    @Inject
    DataSource dataSource;

    @ConfigProperty(name = "quarkus.datasource.jdbc.max-size")
    int poolSize;

    @Test
    void anOrderThatFindsNoDatabaseConnectionFreeIsRefusedAsBusyAndNothingIsWritten() throws Exception {
        String correlationId = "busy-" + UUID.randomUUID();
        List<Connection> held = new ArrayList<>();
        try {
            // every connection of the pool, as a burst of requests would hold them
            while (held.size() < poolSize) {
                held.add(dataSource.getConnection());
            }
            given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                    .when().post("/orders")
                    .then().statusCode(503)
                    .header("Retry-After", "1")
                    .contentType("application/problem+json")
                    .body("title", equalTo("Service busy"));
            // the operator's list of stalled sagas reads with plain JDBC: refused alike, not a 500
            given().auth().preemptive().basic("operator", "operator")
                    .when().get("/operator/orders?stalled=true")
                    .then().statusCode(503)
                    .header("Retry-After", "1")
                    .contentType("application/problem+json");
        } finally {
            for (Connection c : held) {
                c.close();
            }
        }
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).as("orders of the refused request").isZero();
        given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                .when().post("/orders").then().statusCode(201);
    }

    /**
     * Wrong passwords for one operator from one address: the first five are answered 401, then every attempt, the
     * right password too, 429 until the delay has passed; the right one after it signs in and starts the count afresh.
     * alice's own: no other test signs in as her with a wrong password.
     */
    @Test
    void anOperatorsPasswordGuessedAgainAndAgainIsRefusedForAWhileWhateverTheGuess() {
        String waiting = "/operator/orders?waiting=true";
        for (int i = 0; i < 5; i++) {
            given().auth().preemptive().basic("alice", "guess-" + i).get(waiting).then().statusCode(401);
        }
        for (String password : List.of("guess-5", "alice")) {
            // the tests' first delay is 3 s (a slow machine's requests still fall inside it)
            given().auth().preemptive().basic("alice", password).get(waiting).then().statusCode(429)
                    .header("Retry-After", oneOf("1", "2", "3"))
                    .contentType("application/problem+json")
                    .body("detail", containsString("too many wrong passwords"));
        }
        given().auth().preemptive().basic("operator", "operator").get(waiting).then().statusCode(200);

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> given().auth()
                .preemptive().basic("alice", "alice").get(waiting).statusCode() == 200);
        // the 200 above may reach the test before the service counted it (its end is counted after it is sent)
        int afresh = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> given()
                .auth().preemptive().basic("alice", "guess-6").get(waiting).statusCode(), status -> status != 429);
        assertThat(afresh).as("counted afresh: a wrong password is a 401 again").isEqualTo(401);
        given().auth().preemptive().basic("alice", "guess-7").get(waiting).then().statusCode(401);
        given().auth().preemptive().basic("alice", "alice").get(waiting).then().statusCode(200);
    }

    /**
     * A sign-in answered before any resource (a body refused as too large, which closes the connection) is counted as
     * ended: left under way, six of them refused the name for good. bob's own, as alice's above.
     */
    @Test
    void signInsAnsweredBeforeAnyResourceAreCountedAsEnded() {
        String padded = "{\"padding\": \"" + "x".repeat(100_000) + "\"}";
        for (int i = 0; i < 6; i++) {
            given().auth().preemptive().basic("bob", "bob").contentType(ContentType.JSON).body(padded)
                    .when().post("/orders").then().statusCode(413);
        }
        given().auth().preemptive().basic("bob", "bob").get("/operator/orders?waiting=true").then().statusCode(200);
    }

    /** Without credentials and with wrong ones: the challenge, and a body that says what is wanted. */
    @Test
    void anOperatorEndpointWithoutValidCredentialsIsAnsweredWithTheChallengeAndProblemDetails() {
        for (var request : List.of(given(), given().auth().preemptive().basic("operator", "wrong"),
                given().auth().preemptive().basic("nobody", "operator"))) {
            request.when().get("/operator/orders?waiting=true")
                    .then().statusCode(401)
                    .header("WWW-Authenticate", equalTo("basic"))
                    .contentType("application/problem+json")
                    .body("status", equalTo(401))
                    .body("title", equalTo("Unauthorized"))
                    .body("detail", containsString("basic authentication"));
        }
        given().auth().preemptive().basic("operator", "operator").when().get("/operator/orders?waiting=true")
                .then().statusCode(200);
    }

    /** /q/health/live on the management interface (not the API's port); the URL it hands over ends in its root, /q */
    @TestHTTPResource(value = "/health/live", management = true)
    URL liveUrl;

    /** Kubernetes restarts an instance whose relay died only if its liveness says so (RelayLivenessCheckTest). */
    @Test
    void theRelaysSupervisorIsPartOfTheServicesLiveness() {
        given().when().get(liveUrl)
                .then().statusCode(200)
                .body("checks.find { it.name == 'cdc-relay-supervisor' }.status", equalTo("UP"));
    }

    /** The API's port, which a Service and an ingress expose, tells nothing of the instance: health is elsewhere. */
    @Test
    void theApisPortServesNoHealthNorMetrics() {
        for (String path : List.of("/q/health/ready", "/q/health/live", "/q/metrics")) {
            given().when().get(path).then().statusCode(404);
        }
        given().when().get(liveUrl).then().statusCode(200);
    }

    /** Bound as int or boolean, JAX-RS answered "limit=abc" with 404 and took "waiting=yes" for false. */
    @Test
    void anOperatorsQueryParameterOfTheWrongKindIsRefusedNamingIt() {
        for (String query : List.of("limit=abc", "waiting=yes", "stalled=1")) {
            String parameter = query.substring(0, query.indexOf('='));
            given().auth().preemptive().basic("operator", "operator").when().get("/operator/orders?" + query)
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("title", equalTo("Invalid parameter"))
                    .body("detail", containsString(parameter));
        }
        given().auth().preemptive().basic("operator", "operator").when().get("/operator/dead-letters?limit=many")
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("detail", containsString("limit"));
        given().auth().preemptive().basic("operator", "operator").when().get("/operator/orders?waiting=TRUE&limit=5")
                .then().statusCode(200);
    }

    private static String padded(String unique, int length) {
        return unique + "x".repeat(length - unique.length());
    }

    @Test
    void placedOrderIsPendingAndItsOrderCreatedIsOnTheTopic() {
        String correlationId = "test-" + UUID.randomUUID();
        String orderId = given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId)
                .body(Orders.requestJson())
                .when().post("/orders")
                .then().statusCode(201)
                .header("X-Correlation-Id", correlationId)
                .body("status", equalTo("PENDING"))
                .body("correlationId", equalTo(correlationId))
                .body("orderId", notNullValue())
                .extract().path("orderId");

        given().when().get("/orders/" + orderId)
                .then().statusCode(200)
                .body("status", equalTo("PENDING"))
                .body("total", equalTo(21.0f))
                .body("items", hasSize(1))
                .body("items[0].sku", equalTo("SKU-MUG"));

        KafkaTopicProbe.Received received = orderEvents.awaitKey(orderId, Duration.ofSeconds(30));
        EventEnvelope<SagaEvent> envelope = EventCodec.decode(received.value());
        assertThat(envelope.orderId()).hasToString(orderId);
        assertThat(envelope.correlationId()).isEqualTo(correlationId);
        assertThat(envelope.causationId()).isNull();
        OrderCreated created = (OrderCreated) envelope.payload();
        assertThat(created.total()).isEqualByComparingTo("21.00");
        assertThat(created.paymentToken()).isEqualTo("tok_ok");
        assertThat(received.header(EventHeaders.EVENT_ID)).isEqualTo(envelope.eventId().toString());
        assertThat(received.header(EventHeaders.EVENT_TYPE)).isEqualTo("OrderCreated");
        assertThat(received.header(EventHeaders.CORRELATION_ID)).isEqualTo(correlationId);
        assertThat(received.header(EventHeaders.CAUSATION_ID)).isNull();
    }

    @Test
    void locationPointsAtTheOrderAndACorrelationIdIsMadeWhenNoneIsGiven() {
        var response = given().contentType(ContentType.JSON).body(Orders.requestJson())
                .when().post("/orders")
                .then().statusCode(201).extract();
        String orderId = response.path("orderId");
        String correlationId = response.header("X-Correlation-Id");
        assertThat(correlationId).isNotBlank().isEqualTo(response.path("correlationId"));
        assertThat(response.header("Location")).endsWith("/orders/" + orderId);
        given().when().get(response.header("Location")).then().statusCode(200).body("correlationId", equalTo(correlationId));
    }

    @Test
    void invalidOrderIsRejectedWithProblemDetails() {
        String invalid = Orders.requestJson("SKU-MUG", 0, "-1", "tok_ok").replace("\"EUR\"", "\"euro\"");
        given().contentType(ContentType.JSON).body(invalid)
                .when().post("/orders")
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("title", equalTo("Invalid request"))
                .body("status", equalTo(400))
                .body("violations.field", containsInAnyOrder("currency", "items[0].quantity", "items[0].unitPrice"));
    }

    @Test
    void anOrderWithNothingToPayOrATotalTooLargeToKeepIsRejectedAndNothingIsWritten() throws SQLException {
        String free = Orders.requestJson("SKU-MUG", 2, "0.00", "tok_ok");
        String tooLarge = Orders.requestJson("SKU-MUG", 1000, "1000000000000", "tok_ok"); // 10^15: 16 digits
        for (String body : List.of(free, tooLarge)) {
            String correlationId = "refused-" + UUID.randomUUID();
            given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(body)
                    .when().post("/orders")
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("title", equalTo("Invalid order total"))
                    .body("status", equalTo(400));
            assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
        }
        // the largest total the column keeps is taken
        given().contentType(ContentType.JSON).body(Orders.requestJson("SKU-MUG", 100, "9999999999999", "tok_ok"))
                .when().post("/orders").then().statusCode(201);
    }

    @Test
    void aPriceFinerThanTheCurrencysMinorUnitOrAnUnknownCurrencyIsRejectedAndNothingIsWritten() throws SQLException {
        // the provider charges in cents (in yen): such an order would be declined or rounded after stock was reserved
        List<String> bodies = List.of(
                Orders.requestJson("SKU-MUG", 1, "10.001", "tok_ok"),
                Orders.requestJson("SKU-MUG", 1, "10.5", "tok_ok").replace("\"EUR\"", "\"JPY\""),
                Orders.requestJson("SKU-MUG", 1, "10.50", "tok_ok").replace("\"EUR\"", "\"ABC\""),
                Orders.requestJson("SKU-MUG", 1, "10.50", "tok_ok").replace("\"EUR\"", "\"XXX\""));
        List<String> titles = List.of("Invalid unit price", "Invalid unit price", "Invalid currency", "Invalid currency");
        for (int i = 0; i < bodies.size(); i++) {
            String correlationId = "minor-unit-" + UUID.randomUUID();
            given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(bodies.get(i))
                    .when().post("/orders")
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("title", equalTo(titles.get(i)));
            assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
        }
        // trailing zeros past the minor unit are no finer, and a whole number of yen is fine
        given().contentType(ContentType.JSON).body(Orders.requestJson("SKU-MUG", 1, "10.5000", "tok_ok"))
                .when().post("/orders").then().statusCode(201);
        given().contentType(ContentType.JSON)
                .body(Orders.requestJson("SKU-MUG", 1, "1050", "tok_ok").replace("\"EUR\"", "\"JPY\""))
                .when().post("/orders").then().statusCode(201);
    }

    @Test
    void aUnitPriceWhoseExponentOverflowsTheDigitCountIsRejectedNamingTheField() throws SQLException {
        // 1e2147483647 has a scale of -2147483647: @Digits alone counts its integer digits in an int and let it pass,
        // and the total's sum then threw (a 500)
        for (String price : List.of("1e2147483647", "12345678e2147483640")) {
            String correlationId = "exponent-" + UUID.randomUUID();
            given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId)
                    .body(Orders.requestJson("SKU-MUG", 1, price, "tok_ok"))
                    .when().post("/orders")
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("violations.field", equalTo(List.of("items[0].unitPrice")));
            assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
        }
    }

    @Test
    void aQuantityWithAFractionIsRejectedNamingTheFieldAndNothingIsWritten() throws SQLException {
        String correlationId = "fraction-" + UUID.randomUUID();
        given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId)
                .body(Orders.requestJson().replace("\"quantity\": 2", "\"quantity\": 2.9"))
                .when().post("/orders")
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("title", equalTo("Invalid request"))
                .body("violations.field", equalTo(List.of("items[0].quantity")));
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
    }

    @Test
    void textWithANulCharacterIsRejectedNamingTheFieldsAndNothingIsWritten() throws SQLException {
        String correlationId = "nul-" + UUID.randomUUID();
        // PostgreSQL keeps no NUL in text: validation is the last place to refuse it as the client's mistake
        String withNul = Orders.requestJson("SKU\\u0000MUG", 2, "10.50", "tok_ok")
                .replace("\"cust-1\"", "\"a\\u0000b\"");
        given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(withNul)
                .when().post("/orders")
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("violations.field", containsInAnyOrder("customerId", "items[0].sku"));
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
    }

    @Test
    void headersWithControlCharactersOrTooLongAreRejectedNamingTheHeaderAndNothingIsWritten() throws SQLException {
        String correlationId = "headers-" + UUID.randomUUID();
        String withTab = "headers\t" + UUID.randomUUID();
        record Refused(String header, String value, String detail) {
        }
        List<Refused> refused = List.of(
                new Refused("X-Correlation-Id", withTab, "X-Correlation-Id must not contain control characters"),
                new Refused("X-Correlation-Id", "c".repeat(EventCodec.MAX_CORRELATION_ID + 1),
                        "X-Correlation-Id is longer than " + EventCodec.MAX_CORRELATION_ID + " characters"),
                new Refused("Idempotency-Key", "key\tone", "Idempotency-Key must not contain control characters"),
                new Refused("Idempotency-Key", "k".repeat(129), "Idempotency-Key is longer than 128 characters"));
        for (Refused r : refused) {
            var request = given().contentType(ContentType.JSON).body(Orders.requestJson()).header(r.header(), r.value());
            if (!r.header().equals("X-Correlation-Id")) {
                request.header("X-Correlation-Id", correlationId);
            }
            request.when().post("/orders")
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("detail", equalTo(r.detail()));
        }
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
        assertThat(OrderRows.withCorrelation(dataSource, withTab)).isZero();
        // the longest of each is taken (new ones each run: a stored key would be answered by replay)
        String longest = padded("c-" + UUID.randomUUID(), EventCodec.MAX_CORRELATION_ID);
        given().contentType(ContentType.JSON).body(Orders.requestJson())
                .header("X-Correlation-Id", longest).header("Idempotency-Key", padded("k-" + UUID.randomUUID(), 128))
                .when().post("/orders").then().statusCode(201);
        assertThat(OrderRows.withCorrelation(dataSource, longest)).isEqualTo(1);
    }

    /**
     * Sent over a plain socket: an HTTP client may leave out a header without a value (RestAssured's does), and the
     * service must see it.
     */
    @Test
    void anEmptyIdempotencyKeyIsRefusedNotTakenForNoneAndNothingIsWritten() throws Exception {
        String correlationId = "empty-key-" + UUID.randomUUID();
        byte[] body = Orders.requestJson().getBytes(StandardCharsets.UTF_8);
        for (String value : List.of("", "   ")) {
            String answer = RawHttp.exchange(RestAssured.port, "POST /orders", "Content-Type: application/json\r\n"
                    + "X-Correlation-Id: " + correlationId + "\r\nIdempotency-Key:" + value + "\r\n", body);
            assertThat(answer).as("Idempotency-Key:%s", value).startsWith("HTTP/1.1 400")
                    .contains("application/problem+json").contains("Idempotency-Key is empty");
        }
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
    }

    /** Read whole before any check, a body of any size would be the caller's to take memory with. */
    @Test
    void aBodyLargerThanAnyOrderIsRefusedAsTooLargeAndNothingIsWritten() throws SQLException {
        String correlationId = "too-large-" + UUID.randomUUID();
        String order = Orders.requestJson("SKU-MUG", 1, "10.50", "tok_ok");
        // a field no order has, which the service would pass over: only the size is wrong
        String padded = "{\"padding\": \"" + "x".repeat(100_000) + "\", " + order.substring(order.indexOf('{') + 1);
        given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(padded)
                .when().post("/orders")
                .then().statusCode(413)
                .contentType("application/problem+json")
                .body("status", equalTo(413));
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).isZero();
    }

    /** Jackson's own message would name the Java types it binds to: the client learns the field, not our classes. */
    @Test
    void aValueOfAnotherShapeIsRefusedNamingTheFieldNotTheServicesTypes() {
        String answer = given().contentType(ContentType.JSON)
                .body(Orders.requestJson().replaceFirst("\"items\": \\[", "\"items\": \"x\", \"unused\": ["))
                .when().post("/orders")
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("violations[0].field", equalTo("items"))
                .extract().asString();
        assertThat(answer).doesNotContain("dev.ordersaga").doesNotContain("java.");
        given().contentType(ContentType.JSON).body("[1, 2]").when().post("/orders")
                .then().statusCode(400).body("detail", equalTo("the body is not the JSON object this endpoint takes"));
    }

    /**
     * A browser attaches an operator's cached basic credentials to a form another site's page posts here: a change so
     * asked is refused. Reads, the API's own pages, scripts and unauthenticated customers' orders are not.
     */
    @Test
    void aChangeAskedWithBasicCredentialsFromAnotherSitesPageIsRefused() {
        UUID unknown = UUID.randomUUID();
        given().auth().preemptive().basic("operator", "operator").header("Origin", "https://attacker.example")
                .when().post("/operator/orders/{id}/retry-payment", unknown)
                .then().statusCode(403)
                .contentType("application/problem+json")
                .body("title", equalTo("Cross-site request refused"));
        given().auth().preemptive().basic("operator", "operator").header("Sec-Fetch-Site", "cross-site")
                .when().post("/operator/orders/{id}/retry-payment", unknown)
                .then().statusCode(403);

        given().auth().preemptive().basic("operator", "operator")
                .header("Origin", "http://localhost:" + io.restassured.RestAssured.port)
                .when().post("/operator/orders/{id}/retry-payment", unknown)
                .then().statusCode(404);
        given().auth().preemptive().basic("operator", "operator")
                .when().post("/operator/orders/{id}/retry-payment", unknown)
                .then().statusCode(404);
        given().auth().preemptive().basic("operator", "operator").header("Origin", "https://attacker.example")
                .when().get("/operator/orders?waiting=true")
                .then().statusCode(200);
        given().contentType(ContentType.JSON).header("Origin", "https://shop.example").body(Orders.requestJson())
                .when().post("/orders")
                .then().statusCode(201);
    }

    @Test
    void malformedJsonIsRejectedWithProblemDetails() {
        given().contentType(ContentType.JSON).body("{\"customerId\": ")
                .when().post("/orders")
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("status", equalTo(400));
    }

    @Test
    void missingBodyIsRejectedWithProblemDetails() {
        given().contentType(ContentType.JSON)
                .when().post("/orders")
                .then().statusCode(400)
                .contentType("application/problem+json");
    }

    @Test
    void unknownOrderIsNotFound() {
        given().when().get("/orders/" + UUID.randomUUID())
                .then().statusCode(404)
                .contentType("application/problem+json")
                .body("title", equalTo("Order not found"))
                .body("status", equalTo(404));
    }

    /** Not an empty list: an operator who mistyped the id is told so, as every other call about one order does. */
    @Test
    void theActionsOfAnUnknownOrderAreNotFound() {
        given().auth().preemptive().basic("operator", "operator")
                .when().get("/operator/orders/{id}/actions", UUID.randomUUID())
                .then().statusCode(404)
                .contentType("application/problem+json")
                .body("title", equalTo("Order not found"));
    }
}
