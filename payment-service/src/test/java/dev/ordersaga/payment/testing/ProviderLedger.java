package dev.ordersaga.payment.testing;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** What the provider sandbox booked for one order: its charges and refunds (GET /sandbox/ledger). */
public final class ProviderLedger {

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS).build();

    /**
     * {@code chargeCalls} and {@code statusQueries} count the calls under the charge's key (the sandbox books one charge
     * per key however often it is called): what tells a status query from a charge sent again.
     */
    public record Charge(String chargeId, String idempotencyKey, BigDecimal amount, String currency, String status,
                         String token, int chargeCalls, int statusQueries) {
    }

    public record Refund(String refundId, String idempotencyKey, String chargeId, BigDecimal amount, String currency) {
    }

    private final List<Charge> charges;
    private final List<Refund> refunds;

    private ProviderLedger(List<Charge> charges, List<Refund> refunds) {
        this.charges = charges;
        this.refunds = refunds;
    }

    public static ProviderLedger of(String providerUrl, UUID orderId) {
        JsonNode ledger = get(providerUrl + "/sandbox/ledger");
        String reference = orderId.toString();
        List<Charge> charges = new ArrayList<>();
        for (JsonNode c : ledger.path("charges")) {
            if (reference.equals(c.path("reference").asText())) {
                charges.add(new Charge(c.path("chargeId").asText(), c.path("idempotencyKey").asText(),
                        c.path("amount").decimalValue(), c.path("currency").asText(), c.path("status").asText(),
                        c.path("token").asText(), c.path("chargeCalls").asInt(), c.path("statusQueries").asInt()));
            }
        }
        List<Refund> refunds = new ArrayList<>();
        for (JsonNode r : ledger.path("refunds")) {
            if (reference.equals(r.path("reference").asText())) {
                refunds.add(new Refund(r.path("refundId").asText(), r.path("idempotencyKey").asText(),
                        r.path("chargeId").asText(), r.path("amount").decimalValue(), r.path("currency").asText()));
            }
        }
        return new ProviderLedger(List.copyOf(charges), List.copyOf(refunds));
    }

    /** Makes the sandbox settle a declined charge after all (it sends no webhook: the tests have none configured). */
    public static void settleLate(String providerUrl, String chargeId) {
        send(HttpRequest.newBuilder(URI.create(providerUrl + "/sandbox/charges/" + chargeId + "/settle-late"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), 200);
    }

    /** Makes the sandbox forget the key, as real providers do after a day or so: a charge under it charges anew. */
    public static void forgetKey(String providerUrl, String idempotencyKey) {
        send(HttpRequest.newBuilder(URI.create(providerUrl + "/sandbox/keys/" + idempotencyKey + "/forget"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), 200);
    }

    /** Holds every answer of the provider's API back by {@code delay} (zero: answers at once again). */
    public static void slow(String providerUrl, Duration delay) {
        send(HttpRequest.newBuilder(URI.create(providerUrl + "/sandbox/slow"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"delayMs\": " + delay.toMillis() + "}")).build(), 200);
    }

    /**
     * Creates a charge at the sandbox as a call of the service's would (POST /v1/charges under the payment's key): a
     * call that timed out and reaches the provider only later. The sandbox sends no webhook for it here.
     */
    public static void charge(String providerUrl, String idempotencyKey, BigDecimal amount, String currency,
                              String token, String reference) {
        String body;
        try {
            body = JSON.writeValueAsString(Map.of("amount", amount, "currency", currency, "token", token,
                    "reference", reference));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        send(HttpRequest.newBuilder(URI.create(providerUrl + "/v1/charges"))
                .header("Content-Type", "application/json")
                .header("Idempotency-Key", idempotencyKey)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), 201);
    }

    public List<Charge> charges() {
        return charges;
    }

    public List<Refund> refunds() {
        return refunds;
    }

    /** What the customer paid, net of refunds: charges that succeeded minus refunds. */
    public BigDecimal net() {
        BigDecimal charged = charges.stream().filter(c -> "succeeded".equals(c.status())).map(Charge::amount)
                .reduce(BigDecimal.ZERO, BigDecimal::add);
        BigDecimal refunded = refunds.stream().map(Refund::amount).reduce(BigDecimal.ZERO, BigDecimal::add);
        return charged.subtract(refunded);
    }

    private static JsonNode get(String url) {
        return send(HttpRequest.newBuilder(URI.create(url)).GET().build(), 200);
    }

    private static JsonNode send(HttpRequest request, int expected) {
        try {
            HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != expected) {
                throw new IllegalStateException(request.uri() + " answered " + response.statusCode() + ": " + response.body());
            }
            return JSON.readTree(response.body());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
