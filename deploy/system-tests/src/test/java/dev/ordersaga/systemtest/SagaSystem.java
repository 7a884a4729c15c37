package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ordersaga.testing.TestStack;
import io.restassured.http.ContentType;
import org.awaitility.core.ConditionTimeoutException;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;

/**
 * The whole system as separate processes: the payment provider and carrier sandboxes and the four services,
 * on the real PostgreSQL and Kafka. Tests talk to it only as its users and operators would: over HTTP.
 */
final class SagaSystem implements AutoCloseable {

    static final int ORDER = 18181;
    static final int INVENTORY = 18182;
    static final int PAYMENT = 18183;
    static final int SHIPPING = 18184;
    static final int PAYMENT_PROVIDER = 19101;
    static final int CARRIER = 19102;
    static final int SHIPPING_MAX_ATTEMPTS = 4;
    /** Replica n of a service listens on its service's port + n × this. */
    static final int REPLICA_PORT_STEP = 10;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final String name;
    private final Map<String, String> extraProperties;
    private final int replicas;
    private final Function<String, Map<String, String>> environmentOf;
    private final List<ServiceProcess> sandboxes = new ArrayList<>();
    /** Each service's replicas, by replica number. */
    private final Map<String, ServiceProcess[]> services = new HashMap<>();
    private final AtomicInteger nextReplica = new AtomicInteger();
    private final Set<UUID> placed = ConcurrentHashMap.newKeySet();

    private SagaSystem(String name, Map<String, String> extraProperties, int replicas,
                       Function<String, Map<String, String>> environmentOf) {
        this.name = name;
        this.extraProperties = extraProperties;
        this.replicas = replicas;
        this.environmentOf = environmentOf;
    }

    static SagaSystem start(String name, Map<String, String> extraProperties) throws Exception {
        return start(name, extraProperties, 1);
    }

    /**
     * @param extraProperties configuration every service gets on top of its own, e.g. a fault-injection switch
     * @param replicas        instances of each service, as a deployment runs them: they share the service's database,
     *                        consumer group and replication slot; one streams the outbox, the others stand by. Customers
     *                        and operators are spread over them; the payment provider calls the first one back.
     */
    static SagaSystem start(String name, Map<String, String> extraProperties, int replicas) throws Exception {
        return start(name, extraProperties, replicas, service -> Map.of());
    }

    /** @param environmentOf what each service (by module name) gets in its environment, e.g. its own credentials */
    static SagaSystem start(String name, Map<String, String> extraProperties, int replicas,
                            Function<String, Map<String, String>> environmentOf) throws Exception {
        if (replicas < 1 || replicas > 9) {
            throw new IllegalArgumentException("replicas: 1 to 9, not " + replicas);
        }
        SagaSystem system = new SagaSystem(name, extraProperties, replicas, environmentOf);
        try {
            system.sandboxes.add(ServiceProcess.startJar("deploy/sandboxes/target/sandboxes.jar", name + "-payment-provider",
                    PAYMENT_PROVIDER, List.of("payment", "--port", Integer.toString(PAYMENT_PROVIDER),
                            "--webhook-url", "http://127.0.0.1:" + PAYMENT + "/webhooks/payment-provider",
                            "--webhook-secret", ServiceProcess.WEBHOOK_SECRET,
                            "--timeout-delay", "3s",
                            // late enough that a charge can be caught in flight (rule 10), early enough for the tests
                            "--webhook-delay", "4s")));
            system.sandboxes.add(ServiceProcess.startJar("deploy/sandboxes/target/sandboxes.jar", name + "-carrier",
                    CARRIER, List.of("carrier", "--port", Integer.toString(CARRIER))));
            for (String service : List.of("order-service", "inventory-service", "payment-service", "shipping-service")) {
                system.services.put(service, new ServiceProcess[replicas]);
                for (int replica = 0; replica < replicas; replica++) {
                    system.startService(service, replica);
                }
            }
            for (String service : system.services.keySet()) {
                for (ServiceProcess s : system.services.get(service)) {
                    s.awaitReady();
                }
                system.awaitOneStreaming(service);
            }
        } catch (Exception | AssertionError e) {
            system.close();
            throw e;
        }
        return system;
    }

    private void startService(String service, int replica) throws IOException {
        Map<String, String> props = new HashMap<>(extraProperties);
        props.put("payment.provider.url", "http://127.0.0.1:" + PAYMENT_PROVIDER);
        props.put("payment.provider.timeout", "1s");
        props.put("payment.retry.base-delay", "200ms");
        props.put("shipping.carrier.url", "http://127.0.0.1:" + CARRIER);
        props.put("shipping.retry.max-attempts", Integer.toString(SHIPPING_MAX_ATTEMPTS));
        props.put("shipping.retry.base-delay", "1s");
        props.put("shipping.retry.max-delay", "4s");
        // the first replica keeps the plain name: tests read its log as the service's
        String instance = name + "-" + service + (replica == 0 ? "" : "-" + (replica + 1));
        services.get(service)[replica] = ServiceProcess.start(service, instance, portOf(service) + replica * REPLICA_PORT_STEP, props,
                environmentOf.apply(service));
    }

    /** Exactly one replica of the service streams its outbox; the others, if any, stand by. */
    private void awaitOneStreaming(String service) {
        await(service + ": one replica streaming").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> Arrays.stream(services.get(service)).filter(s -> "STREAMING".equals(s.relayRole())).count() == 1);
    }

    private static int portOf(String service) {
        return switch (service) {
            case "order-service" -> ORDER;
            case "inventory-service" -> INVENTORY;
            case "payment-service" -> PAYMENT;
            case "shipping-service" -> SHIPPING;
            default -> throw new IllegalArgumentException(service);
        };
    }

    /** kill -9 and start again, as a crash and a restart by the orchestrator would. */
    void crashAndRestart(String service) throws Exception {
        crashAndRestart(service, 0);
    }

    /**
     * kill -9 of one replica and start it again. Whichever replica then streams, one does: a standby takes the
     * stream over from a killed replica that streamed.
     */
    void crashAndRestart(String service, int replica) throws Exception {
        services.get(service)[replica].kill();
        startService(service, replica);
        services.get(service)[replica].awaitReady();
        awaitOneStreaming(service);
    }

    /** The process ids of the services and the sandboxes, by name. */
    Map<String, Long> pids() {
        Map<String, Long> pids = new java.util.LinkedHashMap<>();
        services.forEach((service, processes) -> {
            for (int replica = 0; replica < processes.length; replica++) {
                pids.put(service + (replica == 0 ? "" : "-" + (replica + 1)), processes[replica].pid());
            }
        });
        sandboxes.forEach(process -> pids.put(process.name(), process.pid()));
        return pids;
    }

    /** The address of one process: the first replica, for a service's port. */
    String url(int port) {
        return "http://127.0.0.1:" + port;
    }

    /**
     * The address customers and operators use for a service, as a load balancer would hand them out: the
     * replicas in turn. A replica that is down at that moment fails the call, which the retrying callers repeat.
     */
    private String balanced(int port) {
        return url(port + Math.floorMod(nextReplica.getAndIncrement(), replicas) * REPLICA_PORT_STEP);
    }

    // --- customers

    /** Places an order and returns its id. */
    UUID place(String correlationId, String paymentToken, String line1, Line... lines) {
        String id = given().baseUri(balanced(ORDER)).contentType(ContentType.JSON).header("X-Correlation-Id", correlationId)
                .body(orderJson(paymentToken, line1, lines)).post("/orders").then().statusCode(201).extract().path("orderId");
        return placed(UUID.fromString(id));
    }

    /** Every order this system placed, through {@link #place} or {@link #placeRetrying}: what its audit must judge. */
    Set<UUID> placed() {
        return Set.copyOf(placed);
    }

    private UUID placed(UUID order) {
        placed.add(order);
        return order;
    }

    private static String orderJson(String paymentToken, String line1, Line... lines) {
        StringBuilder items = new StringBuilder();
        for (Line l : lines) {
            if (items.length() > 0) {
                items.append(',');
            }
            items.append("{\"sku\":\"%s\",\"quantity\":%d,\"unitPrice\":%s}".formatted(l.sku(), l.quantity(), l.unitPrice()));
        }
        String body = """
                {"customerId": "cust-1", "items": [%s], "currency": "EUR", "paymentToken": "%s",
                 "shippingAddress": {"name": "Ada Lovelace", "line1": "%s", "city": "London", "postalCode": "SW1Y 4JH",
                                     "country": "GB"}}""".formatted(items, paymentToken, line1);
        return body;
    }

    record Line(String sku, int quantity, String unitPrice) {
    }

    /**
     * Places an order like a careful client: with an Idempotency-Key, retried while the service is down or
     * answers 5xx (a crash or a database restart in the middle), so that the order is placed exactly once.
     */
    UUID placeRetrying(String correlationId, String paymentToken, String line1, Line... lines) {
        String key = "key-" + correlationId;
        return await("order placed").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions()
                .until(() -> placeWithKey(key, correlationId, paymentToken, line1, lines), java.util.Objects::nonNull);
    }

    private UUID placeWithKey(String key, String correlationId, String paymentToken, String line1, Line... lines) {
        io.restassured.response.Response response = given().baseUri(balanced(ORDER)).contentType(ContentType.JSON)
                .header("X-Correlation-Id", correlationId).header("Idempotency-Key", key)
                .body(orderJson(paymentToken, line1, lines)).post("/orders");
        if (response.statusCode() != 201) {
            throw new IllegalStateException("POST /orders answered " + response.statusCode());
        }
        return placed(UUID.fromString(response.path("orderId")));
    }

    /** A customer cancel that may come too late (409) or while order-service restarts (retried). */
    void cancelIfStillPossible(UUID id) {
        await("cancel answered").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .until(() -> given().baseUri(balanced(ORDER)).post("/orders/{id}/cancel", id).statusCode(), s -> s == 202 || s == 409);
    }

    /** Restarts PostgreSQL or Kafka of the local stack (deploy/stack/*.sh), as an operator or a crash would. */
    void restartStack(String part) throws IOException, InterruptedException, SQLException {
        String before = lifeOf(part);
        stack(part, "stop", name);
        // the local broker's pid file tells its lives apart, not whether it is the broker the services use
        if ("kafka".equals(part) && answers(TestStack.kafkaBootstrap())) {
            throw new IllegalStateException("kafka was not restarted: the broker the services use, "
                    + TestStack.kafkaBootstrap() + ", still answers with the local stack's stopped");
        }
        stack(part, "start", name);
        String after = lifeOf(part);
        // a script that found nothing to stop, or a stack elsewhere than the one the services use, restarts nothing
        if (before == null || before.equals(after)) {
            throw new IllegalStateException(part + " was not restarted (before: " + before + ", after: " + after + ")");
        }
    }

    /** Whether any server of a bootstrap list ({@code host:port,...}) takes a connection. */
    static boolean answers(String bootstrap) {
        for (String server : bootstrap.split(",")) {
            int colon = server.lastIndexOf(':');
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(server.substring(0, colon).trim(),
                        Integer.parseInt(server.substring(colon + 1).trim())), 2_000);
                return true;
            } catch (IOException refused) {
                // the next one
            }
        }
        return false;
    }

    /** What tells one life of a part of the stack from the next: PostgreSQL's start time, the broker's process. */
    private static String lifeOf(String part) throws IOException, SQLException {
        if ("postgres".equals(part)) {
            try (Connection c = TestStack.connect("postgres"); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT pg_postmaster_start_time()::text")) {
                rs.next();
                return rs.getString(1);
            }
        }
        Path pid = RepoRoot.path().resolve(".stack/kafka/kafka.pid");
        return Files.exists(pid) ? Files.readString(pid).trim() : null;
    }

    /** Runs {@code deploy/stack/<part>.sh <action>} (postgres or kafka; stop or start), its output in a log of the run. */
    static void stack(String part, String action, String run) throws IOException, InterruptedException {
        Path script = RepoRoot.path().resolve("deploy/stack/" + part + ".sh");
        Path log = Path.of("target", "system-test-logs", run + "-stack.log");
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder("bash", script.toString(), action).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        if (!p.waitFor(3, java.util.concurrent.TimeUnit.MINUTES)) {
            // the script and what it started must not outlive the test that gave up on it (what runs under sudo is
            // beyond this process's reach: postgres.sh bounds its cluster commands itself)
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw new IllegalStateException(script + " " + action + " did not end within 3 minutes; see " + log);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(script + " " + action + " failed; see " + log);
        }
    }

    JsonNode order(UUID id) {
        return json(given().baseUri(balanced(ORDER)).get("/orders/{id}", id).then().statusCode(200).extract().asString());
    }

    String status(UUID id) {
        return order(id).path("status").asText();
    }

    /** Waits until the saga of the order ended (CONFIRMED, CANCELLED) or waits for a person. */
    JsonNode awaitSettled(UUID id, Duration timeout) {
        return await("order " + id + " settled").atMost(timeout).pollInterval(Duration.ofMillis(100))
                .until(() -> order(id), o -> List.of("CONFIRMED", "CANCELLED").contains(o.path("status").asText())
                        || o.hasNonNull("waitingReason"));
    }

    /** Waits until the saga of the order ended: CONFIRMED or CANCELLED. */
    JsonNode awaitFinished(UUID id, Duration timeout) {
        return await("order " + id + " finished").atMost(timeout).pollInterval(Duration.ofMillis(100))
                .until(() -> order(id), o -> List.of("CONFIRMED", "CANCELLED").contains(o.path("status").asText()));
    }

    JsonNode awaitStatus(UUID id, String status, Duration timeout) {
        return await("order " + id + " " + status).atMost(timeout).pollInterval(Duration.ofMillis(100))
                .until(() -> order(id), o -> status.equals(o.path("status").asText()));
    }

    void cancel(UUID id, int expectedStatus) {
        given().baseUri(balanced(ORDER)).post("/orders/{id}/cancel", id).then().statusCode(expectedStatus);
    }

    List<String> timelineTypes(UUID id) {
        List<String> types = new ArrayList<>();
        json(given().baseUri(balanced(ORDER)).get("/orders/{id}/timeline", id).then().statusCode(200).extract().asString())
                .forEach(e -> types.add(e.path("type").asText()));
        return types;
    }

    // --- operators

    JsonNode waitingOrders() {
        return json(given().baseUri(balanced(ORDER)).auth().preemptive().basic("operator", "operator")
                .get("/operator/orders?waiting=true").then().statusCode(200).extract().asString());
    }

    /** Whose step an order waits for (SHIPPING, PAYMENT), as the operators' list of waiting orders says. */
    String waitingFor(UUID id) {
        JsonNode waiting = json(given().baseUri(balanced(ORDER)).auth().preemptive().basic("operator", "operator")
                .get("/operator/orders?waiting=true&limit=1000").then().statusCode(200).extract().asString());
        for (JsonNode order : waiting) {
            if (id.toString().equals(order.path("orderId").asText())) {
                return order.path("waitingFor").asText();
            }
        }
        throw new AssertionError("order " + id + " is not in the operators' list of waiting orders: " + waiting);
    }

    void operatorRetryShipping(UUID id) {
        given().baseUri(balanced(ORDER)).auth().preemptive().basic("operator", "operator")
                .post("/operator/orders/{id}/retry-shipping", id).then().statusCode(202);
    }

    void operatorCancel(UUID id) {
        given().baseUri(balanced(ORDER)).auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON)
                .body("{\"reason\": \"carrier will not recover\"}")
                .post("/operator/orders/{id}/cancel", id).then().statusCode(202);
    }

    // --- payment

    /**
     * The payment of the order as an operator sees it (GET /operator/payments/{orderId}); a missing node while payment
     * has not heard of the order.
     */
    JsonNode operatorPayment(UUID orderId) {
        io.restassured.response.Response response = given().baseUri(balanced(PAYMENT)).auth().preemptive()
                .basic("operator", "operator").get("/operator/payments/{orderId}", orderId);
        if (response.statusCode() == 404) {
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }
        return json(response.then().statusCode(200).extract().asString());
    }

    /**
     * The operator's word that the refund the provider keeps refusing was made another way, without its refund id;
     * asked again while a refund call is under way (409: the worker retries the refund between refusals), as an
     * operator would.
     */
    void operatorConfirmRefunded(UUID orderId, String reason) {
        operatorConfirm(PAYMENT, "/operator/payments/{orderId}/confirm-refunded", Map.of("reason", reason), orderId);
    }

    /** What an operator reads at {@code path} of a service (role operator). */
    JsonNode operatorRead(int service, String path, Object... pathParams) {
        return json(given().baseUri(balanced(service)).auth().preemptive().basic("operator", "operator")
                .get(path, pathParams).then().statusCode(200).extract().asString());
    }

    /**
     * An operator's confirm of an undo a provider keeps refusing, asked again while a call of the service's worker is
     * under way (409: the worker retries between refusals), as an operator would; what it answered.
     */
    JsonNode operatorConfirm(int service, String path, Map<String, ?> body, Object... pathParams) {
        String[] answer = new String[1];
        await("confirmed by the operator: " + path).atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    io.restassured.response.Response response = given().baseUri(balanced(service)).auth()
                            .preemptive().basic("operator", "operator").contentType(ContentType.JSON).body(body)
                            .post(path, pathParams);
                    if (response.statusCode() != 200 && response.statusCode() != 409) {
                        throw new AssertionError(path + " answered " + response.statusCode() + ": "
                                + response.asString());
                    }
                    answer[0] = response.asString();
                    return response.statusCode() == 200;
                });
        return json(answer[0]);
    }

    // --- inventory

    void stock(String sku, int quantity) {
        given().baseUri(balanced(INVENTORY)).auth().preemptive().basic("operator", "operator").contentType(ContentType.JSON)
                .body("{\"quantity\": " + quantity + "}")
                .put("/stock/{sku}", sku).then().statusCode(200);
    }

    JsonNode stock(String sku) {
        return json(given().baseUri(balanced(INVENTORY)).get("/stock/{sku}", sku).then().statusCode(200).extract().asString());
    }

    // --- the outside world

    /** Charges minus refunds at the provider for the order. */
    BigDecimal netCharge(UUID orderId) {
        JsonNode ledger = paymentLedger();
        BigDecimal net = BigDecimal.ZERO;
        for (JsonNode c : ledger.path("charges")) {
            if (orderId.toString().equals(c.path("reference").asText()) && "succeeded".equals(c.path("status").asText())) {
                net = net.add(c.path("amount").decimalValue());
            }
        }
        for (JsonNode r : ledger.path("refunds")) {
            if (orderId.toString().equals(r.path("reference").asText())) {
                net = net.subtract(r.path("amount").decimalValue());
            }
        }
        return net;
    }

    List<JsonNode> charges(UUID orderId) {
        List<JsonNode> charges = new ArrayList<>();
        paymentLedger().path("charges").forEach(c -> {
            if (orderId.toString().equals(c.path("reference").asText())) {
                charges.add(c);
            }
        });
        return charges;
    }

    /**
     * How many calls the provider had with each of the order's charge keys: the ledger keeps one charge a key however
     * often it is called, so a charge sent again under its key shows here and nowhere else.
     */
    List<Integer> chargeCalls(UUID orderId) {
        return charges(orderId).stream().map(c -> c.path("chargeCalls").asInt()).toList();
    }

    List<JsonNode> refunds(UUID orderId) {
        List<JsonNode> refunds = new ArrayList<>();
        paymentLedger().path("refunds").forEach(r -> {
            if (orderId.toString().equals(r.path("reference").asText())) {
                refunds.add(r);
            }
        });
        return refunds;
    }

    JsonNode paymentLedger() {
        return json(given().baseUri(url(PAYMENT_PROVIDER)).get("/sandbox/ledger").then().statusCode(200).extract().asString());
    }

    void settleLate(String chargeId) {
        given().baseUri(url(PAYMENT_PROVIDER)).post("/sandbox/charges/{id}/settle-late", chargeId).then().statusCode(200);
    }

    /**
     * The provider forgets the charge key and is charged again under it, as a call of payment-service's would be: what
     * a provider that keeps keys for a day does when a charge comes again under an old key (an operator's retry of a
     * held payment). Returns the second charge's id.
     */
    String chargeAgainUnderForgottenKey(JsonNode charge) {
        return chargeAgainUnderForgottenKey(charge, "tok_ok");
    }

    /** @param token the card's, as the payment sends it: one that refuses refunds makes a surplus no API undoes */
    String chargeAgainUnderForgottenKey(JsonNode charge, String token) {
        String key = charge.path("idempotencyKey").asText();
        given().baseUri(url(PAYMENT_PROVIDER)).post("/sandbox/keys/{key}/forget", key).then().statusCode(200);
        String body = "{\"amount\": %s, \"currency\": \"%s\", \"token\": \"%s\", \"reference\": \"%s\"}".formatted(
                charge.path("amount").decimalValue().toPlainString(), charge.path("currency").asText(), token,
                charge.path("reference").asText());
        return given().baseUri(url(PAYMENT_PROVIDER)).contentType(ContentType.JSON).header("Idempotency-Key", key)
                .body(body).post("/v1/charges").then().statusCode(201).extract().path("chargeId");
    }

    /** As {@link #chargeAgainUnderForgottenKey}, a second parcel at the carrier under a shipment's key. */
    String createAgainUnderForgottenKey(JsonNode shipment) {
        return createAgainUnderForgottenKey(shipment, "1 Main St");
    }

    /** @param line1 the address's, as the shipment sends it: "UNCANCELLABLE" makes a surplus no API undoes */
    String createAgainUnderForgottenKey(JsonNode shipment, String line1) {
        String key = shipment.path("idempotencyKey").asText();
        given().baseUri(url(CARRIER)).post("/sandbox/keys/{key}/forget", key).then().statusCode(200);
        String body = """
                {"reference": "%s", "address": {"name": "Ada Lovelace", "line1": "%s", "city": "London",
                                               "postalCode": "SW1Y 4JH", "country": "GB"}}""".formatted(
                shipment.path("reference").asText(), line1);
        return given().baseUri(url(CARRIER)).contentType(ContentType.JSON).header("Idempotency-Key", key)
                .body(body).post("/v1/shipments").then().statusCode(201).extract().path("shipmentId");
    }

    /** Shipments at the carrier for the order, by status. */
    List<String> shipments(UUID orderId) {
        return carrierShipments(orderId).stream().map(s -> s.path("status").asText()).toList();
    }

    /** As {@link #chargeCalls}, the create calls the carrier had with each of the order's shipment keys. */
    List<Integer> carrierCreateCalls(UUID orderId) {
        return carrierShipments(orderId).stream().map(s -> s.path("createCalls").asInt()).toList();
    }

    List<JsonNode> carrierShipments(UUID orderId) {
        List<JsonNode> shipments = new ArrayList<>();
        json(given().baseUri(url(CARRIER)).get("/sandbox/ledger").then().statusCode(200).extract().asString())
                .path("shipments").forEach(s -> {
                    if (orderId.toString().equals(s.path("reference").asText())) {
                        shipments.add(s);
                    }
                });
        return shipments;
    }

    /**
     * Every answer of the payment provider takes this long from now on (0: back to normal). Returns how many of its
     * answers a delay has held back so far.
     */
    long paymentProviderSlow(int delayMs) {
        return slow(PAYMENT_PROVIDER, delayMs);
    }

    /** Every answer of the carrier's API this much later (the calls themselves take effect at once); as above. */
    long carrierSlow(int delayMs) {
        return slow(CARRIER, delayMs);
    }

    long paymentProviderSlowedAnswers() {
        return slowedAnswers(PAYMENT_PROVIDER);
    }

    long carrierSlowedAnswers() {
        return slowedAnswers(CARRIER);
    }

    /**
     * The payment provider forgets every charge's key as soon as it made the charge ({@code on}), or remembers keys
     * again. Returns how many charges it has made anew under a forgotten key so far.
     */
    long paymentProviderForgetful(boolean on) {
        return given().baseUri(url(PAYMENT_PROVIDER)).contentType(ContentType.JSON).body("{\"on\": " + on + "}")
                .post("/sandbox/forgetful").then().statusCode(200).extract().jsonPath().getLong("chargedUnderForgottenKeys");
    }

    long paymentProviderChargedUnderForgottenKeys() {
        return given().baseUri(url(PAYMENT_PROVIDER)).get("/sandbox/forgetful").then().statusCode(200).extract()
                .jsonPath().getLong("chargedUnderForgottenKeys");
    }

    /**
     * The carrier forgets every shipment's key as soon as it created the shipment and answers each create past
     * shipping's timeout ({@code on}), or remembers keys and answers at once again. Returns how many shipments it has
     * created anew under a forgotten key so far.
     */
    long carrierForgetful(boolean on) {
        return given().baseUri(url(CARRIER)).contentType(ContentType.JSON)
                .body(on ? "{\"on\": true, \"answerDelayMs\": 2500}" : "{\"on\": false}")
                .post("/sandbox/forgetful").then().statusCode(200).extract().jsonPath().getLong("createdUnderForgottenKeys");
    }

    long carrierCreatedUnderForgottenKeys() {
        return given().baseUri(url(CARRIER)).get("/sandbox/forgetful").then().statusCode(200).extract()
                .jsonPath().getLong("createdUnderForgottenKeys");
    }

    private long slow(int sandbox, int delayMs) {
        return given().baseUri(url(sandbox)).contentType(ContentType.JSON).body("{\"delayMs\": " + delayMs + "}")
                .post("/sandbox/slow").then().statusCode(200).extract().jsonPath().getLong("slowedAnswers");
    }

    private long slowedAnswers(int sandbox) {
        return given().baseUri(url(sandbox)).get("/sandbox/slow").then().statusCode(200).extract().jsonPath()
                .getLong("slowedAnswers");
    }

    void carrierOutage(int failures) {
        given().baseUri(url(CARRIER)).contentType(ContentType.JSON).body("{\"failures\": " + failures + "}")
                .post("/sandbox/carrier/outage").then().statusCode(200);
    }

    JsonNode shipment(UUID orderId) {
        return json(given().baseUri(balanced(SHIPPING)).auth().preemptive().basic("operator", "operator")
                .get("/shipments/{id}", orderId).then().statusCode(200).extract().asString());
    }

    // --- the audit of the saga's invariants (deploy/audit)

    /** Runs deploy/audit over the orders created since the given instant; returns its exit code and report. */
    AuditRun audit(Instant since) throws IOException, InterruptedException {
        return audit("--since", since.toString());
    }

    /**
     * The audit over the orders created since {@code since}, counted only once every consumer had committed all that
     * was published to Kafka before it read: settled is not quiet. A copy of an event (a relay's after a kill, the
     * publish-twice switch's) may still be on its way to a consumer, and an effect it applied twice after the audit
     * read would go unseen. Repeated until it is clean; fails after {@code atMost} with the lag and the last report.
     */
    AuditRun auditOnceQuiet(Instant since, Duration atMost, String context) {
        AuditRun[] last = new AuditRun[1];
        AtomicReference<Object> behind = new AtomicReference<>(Map.of());
        try {
            await("every consumer caught up, then the audit finds no violation").atMost(atMost)
                    .pollInterval(Duration.ofSeconds(3)).until(() -> {
                        try {
                            Map<String, Long> lag = ConsumerLag.behind();
                            behind.set(lag);
                            if (!ConsumerLag.caughtUp(lag)) {
                                return false;
                            }
                        } catch (Exception e) {
                            // a coordinator still loading after Kafka's restart, a rebalance: asked again
                            behind.set(e);
                            return false;
                        }
                        return (last[0] = audit(since)).exitCode() == 0;
                    });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(context + ", records the consumers had yet to apply " + behind.get()
                    + ", audit exit " + (last[0] == null ? "?" : last[0].exitCode())
                    + ":\n" + (last[0] == null ? "" : last[0].report()), e);
        }
        return last[0];
    }

    /** Runs deploy/audit over the given orders only. */
    AuditRun audit(List<UUID> orders) throws IOException, InterruptedException {
        Path list = Files.createTempFile("audit-orders", ".txt");
        try {
            Files.write(list, orders.stream().map(UUID::toString).toList());
            return audit("--orders", list.toAbsolutePath().toString());
        } finally {
            Files.deleteIfExists(list);
        }
    }

    private AuditRun audit(String scopeOption, String scope) throws IOException, InterruptedException {
        Path root = RepoRoot.path();
        Path jar = root.resolve("deploy/audit/target/audit.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: package it first (./mvnw package)");
        }
        Path report = Path.of("target", "system-test-logs", name + "-audit.txt");
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar",
                jar.toAbsolutePath().toString(), scopeOption, scope,
                "--pg-host", TestStack.postgresHost(), "--pg-port", Integer.toString(TestStack.postgresPort()),
                "--kafka", TestStack.kafkaBootstrap(),
                "--payment-provider", url(PAYMENT_PROVIDER), "--carrier", url(CARRIER))
                .redirectErrorStream(true).redirectOutput(report.toFile()).start();
        if (!process.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("the audit did not finish within 120 s");
        }
        return new AuditRun(process.exitValue(), Files.readString(report));
    }

    record AuditRun(int exitCode, String report) {
    }

    // --- observability

    /** The value of a Prometheus counter of a service, summed over the series whose labels contain the filter. */
    double metric(int port, String name, String labelFilter) {
        String text = given().baseUri(url(ServiceProcess.managementPort(port))).get("/q/metrics").then().statusCode(200).extract().asString();
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(name) && line.contains(labelFilter)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    long logLines(String service, String... fragments) throws IOException {
        Path log = Path.of("target", "system-test-logs", name + "-" + service + ".log");
        return Files.readAllLines(log).stream().filter(l -> {
            for (String f : fragments) {
                if (!l.contains(f)) {
                    return false;
                }
            }
            return true;
        }).count();
    }

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws Exception {
        for (ServiceProcess[] processes : services.values()) {
            for (ServiceProcess s : processes) {
                if (s != null) {
                    s.close();
                }
            }
        }
        for (ServiceProcess s : sandboxes) {
            s.close();
        }
    }

    static String newSku() {
        return "SKU-" + UUID.randomUUID().toString().substring(0, 8);
    }
}
