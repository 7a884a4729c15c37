package dev.ordersaga.payment.provider;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.ordersaga.work.ProviderHttp;
import dev.ordersaga.work.ProviderIds;
import dev.ordersaga.work.ProviderReport;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The payment provider's HTTP API: charge, charge status, refund. Every call carries an idempotency key and an
 * explicit timeout; every outcome is a value, never an exception, and anything that is not a clear answer
 * (timeout, connection error, 5xx, an unexpected status) is {@link Unresolved} or {@link RefundFailed} — never a
 * decline. Called outside any database transaction.
 */
@ApplicationScoped
public class PaymentProviderClient {

    private static final Logger LOG = Logger.getLogger(PaymentProviderClient.class);
    /** What payment.provider_charge_id, provider_refund_id and surplus_charge.provider_ref hold. */
    public static final int ID_WIDTH = 255;

    /** What the provider said about a charge. */
    public sealed interface ChargeOutcome permits Charged, Declined, NotFound, Unresolved {
    }

    public record Charged(String chargeId) implements ChargeOutcome {
    }

    /**
     * @param requestRefused the provider refused the request as it stood (400, 422) rather than declining the card:
     *                       proof that this request charged nothing, not that no earlier one under its key did
     */
    public record Declined(String reason, boolean requestRefused) implements ChargeOutcome {

        public Declined(String reason) {
            this(reason, false);
        }
    }

    /** The status query: the provider never saw a charge with this key. */
    public record NotFound() implements ChargeOutcome {
    }

    /** No clear answer: the charge may or may not have happened. */
    public record Unresolved(String reason) implements ChargeOutcome {
    }

    public sealed interface RefundOutcome permits Refunded, RefundFailed {
    }

    public record Refunded(String refundId) implements RefundOutcome {
    }

    /**
     * @param refused the provider read the request and refused it (a 4xx but a timeout's or a throttle's): no refund
     *                was made, under this key or before (it would have been answered, as any repeat under a key is);
     *                else no usable answer came, and one may have been made
     */
    public record RefundFailed(String reason, boolean refused) implements RefundOutcome {

        public RefundFailed(String reason) {
            this(reason, false);
        }
    }

    private final ObjectMapper json = JsonMapper.builder()
            .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    @ConfigProperty(name = "payment.provider.url")
    String baseUrl;

    @ConfigProperty(name = "payment.provider.timeout", defaultValue = "1s")
    Duration timeout;

    private ProviderHttp http;

    @PostConstruct
    void init() {
        http = new ProviderHttp(baseUrl, timeout);
    }

    /** See {@link ProviderHttp#longestExchange()}. */
    public Duration longestExchange() {
        return http.longestExchange();
    }

    /** POST /v1/charges. */
    public ChargeOutcome charge(String idempotencyKey, BigDecimal amount, String currency, String token, String reference) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("amount", amount);
        body.put("currency", currency);
        body.put("token", token);
        body.put("reference", reference);
        Answer answer;
        try {
            answer = send("POST", "/v1/charges", idempotencyKey, body);
        } catch (NoAnswer e) {
            return new Unresolved(e.getMessage());
        }
        if (answer.status() == 201 || answer.status() == 200) {
            return verdict(answer);
        }
        if (answer.status() == 402) {
            return new Declined(answer.text("reason", "declined by the provider"));
        }
        if (answer.status() == 400 || answer.status() == 422) {
            // read and refused as it stands: nothing was charged, and the same request, which every attempt of a
            // payment sends, would be refused again; retried, the payment would stay CHARGING for ever
            return new Declined("the provider refused the charge request (" + answer.status() + "): "
                    + answer.text("error", answer.text("reason", "invalid request")), true);
        }
        return new Unresolved("provider answered " + answer.status() + ": " + answer.body());
    }

    /** GET /v1/charges/{idempotencyKey}. */
    public ChargeOutcome chargeStatus(String idempotencyKey) {
        Answer answer;
        try {
            answer = send("GET", "/v1/charges/" + URLEncoder.encode(idempotencyKey, StandardCharsets.UTF_8), null, null);
        } catch (NoAnswer e) {
            return new Unresolved(e.getMessage());
        }
        if (answer.status() == 200) {
            return verdict(answer);
        }
        if (answer.status() == 404) {
            return new NotFound();
        }
        return new Unresolved("provider answered " + answer.status() + ": " + answer.body());
    }

    /** POST /v1/refunds. */
    public RefundOutcome refund(String idempotencyKey, String chargeId, BigDecimal amount, String currency, String reference) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("chargeId", chargeId);
        body.put("amount", amount);
        body.put("currency", currency);
        body.put("reference", reference);
        Answer answer;
        try {
            answer = send("POST", "/v1/refunds", idempotencyKey, body);
        } catch (NoAnswer e) {
            return new RefundFailed(e.getMessage());
        }
        boolean answered = answer.status() == 201 || answer.status() == 200;
        boolean succeeded = "succeeded".equals(answer.text("status", null));
        if (answered && succeeded && ProviderIds.keepable(answer.text("refundId", null), ID_WIDTH)) {
            return new Refunded(answer.text("refundId", null));
        }
        // a refund answered as failed, cancelled or pending is the provider's word on it, which the same key only
        // repeats: retried, it would be asked for ever, and only a refusal lets an operator settle it by hand
        return new RefundFailed("provider answered " + answer.status() + ": " + answer.body(),
                ProviderHttp.refusal(answer.status()) || answered && !succeeded);
    }

    /** A charge the provider settled, as its settlement report lists it. */
    public record Settlement(String chargeId, String idempotencyKey) {
    }

    /**
     * GET /v1/reports/settlements: the charges the provider settled, late settlements included, in the order it settled
     * them, from {@code cursor} (an earlier page's {@code next}) or, without one, from {@code since}. Empty when the provider
     * gave no usable answer: the next read starts from the same place.
     */
    public Optional<ProviderReport.Page<Settlement>> settlements(String cursor, Instant since, int limit) {
        Answer answer;
        try {
            answer = send("GET", "/v1/reports/settlements?" + ProviderReport.query(cursor, since, limit), null, null);
        } catch (NoAnswer e) {
            LOG.infof("Settlement report not read: %s", e.getMessage());
            return Optional.empty();
        }
        Optional<ProviderReport.Page<Settlement>> page = answer.status() != 200 ? Optional.empty()
                : ProviderReport.Page.fromJson(answer.tree(), "settlements", entry -> {
                    String chargeId = ProviderReport.text(entry, "chargeId");
                    String key = ProviderReport.text(entry, "idempotencyKey");
                    if (key != null && !ProviderIds.keepable(chargeId, ID_WIDTH)) {
                        // recorded, it would stop every read at its page: passed over, for a person to settle
                        LOG.errorf("ALERT settlement report: the charge under key %s has %s; passed over", key,
                                ProviderIds.whyNotKept(chargeId, ID_WIDTH));
                        return null;
                    }
                    return key == null ? null : new Settlement(chargeId, key);
                });
        if (page.isEmpty()) {
            LOG.warnf("Settlement report not read: the provider answered %d: %s", answer.status(), answer.body());
        }
        return page;
    }

    private ChargeOutcome verdict(Answer answer) {
        String status = answer.text("status", "");
        String chargeId = answer.text("chargeId", null);
        if ("succeeded".equals(status) && ProviderIds.keepable(chargeId, ID_WIDTH)) {
            return new Charged(chargeId);
        }
        if ("succeeded".equals(status)) {
            // charged, under an id that cannot be recorded: no decline, asked again after a backoff, and a person told,
            // since a late settlement's watch takes this for no settlement and the money would stay taken unseen
            String why = ProviderIds.whyNotKept(chargeId, ID_WIDTH);
            LOG.errorf("ALERT the provider says a charge succeeded with %s: it cannot be recorded", why);
            return new Unresolved("charge succeeded with " + why);
        }
        if ("declined".equals(status)) {
            return new Declined(answer.text("reason", "declined by the provider"));
        }
        return new Unresolved("charge in status '" + status + "'");
    }

    private record Answer(int status, String body, JsonNode tree) {

        String text(String field, String fallback) {
            JsonNode node = tree == null ? null : tree.get(field);
            return node == null || node.isNull() ? fallback : node.asText();
        }
    }

    /** The provider gave no answer: timeout, connection refused or reset, interrupted. */
    private static final class NoAnswer extends Exception {
        NoAnswer(String message) {
            super(message);
        }
    }

    private Answer send(String method, String path, String idempotencyKey, Object body) throws NoAnswer {
        Map<String, String> headers = idempotencyKey == null ? Map.of() : Map.of("Idempotency-Key", idempotencyKey);
        long started = System.nanoTime();
        ProviderHttp.Answer response;
        try {
            response = http.exchange(method, path, headers, body == null ? null : write(body));
        } catch (ProviderHttp.NoAnswerInTime e) {
            LOG.infof("%s %s: no answer within %d ms", method, path, timeout.toMillis());
            throw new NoAnswer("timeout after " + timeout.toMillis() + " ms");
        } catch (IOException e) {
            LOG.infof("%s %s: %s", method, path, e.toString());
            throw new NoAnswer("connection failed: " + e);
        }
        // the worker logs what the answer meant; the exchange itself is for debugging
        LOG.debugf("%s %s -> %d in %d ms", method, path, response.status(), (System.nanoTime() - started) / 1_000_000);
        return new Answer(response.status(), response.body(), parse(response.body()));
    }

    private String write(Object body) {
        try {
            return json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot write a provider request", e);
        }
    }

    private JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            return json.readTree(body);
        } catch (JsonProcessingException e) {
            return null;
        }
    }
}
