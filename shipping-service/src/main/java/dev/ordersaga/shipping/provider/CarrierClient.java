package dev.ordersaga.shipping.provider;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.ordersaga.work.ProviderHttp;
import dev.ordersaga.work.ProviderHttp.Answer;
import dev.ordersaga.work.ProviderIds;
import dev.ordersaga.work.ProviderReport;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The carrier's HTTP API, and nothing else: every call carries an idempotency key and waits no longer than the
 * configured timeout to connect, nor to read the answer ({@link ProviderHttp}). Answers are classified, never thrown:
 * what to do with them is the caller's business.
 */
@ApplicationScoped
public class CarrierClient {

    private static final Logger LOG = Logger.getLogger(CarrierClient.class);
    /** What shipment.carrier_shipment_id and surplus_shipment.provider_ref hold. */
    static final int ID_WIDTH = 128;

    private static final ObjectMapper JSON = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private final String baseUrl;
    private final Duration timeout;
    private final ProviderHttp http;

    @Inject
    public CarrierClient(@ConfigProperty(name = "shipping.carrier.url") String baseUrl,
                         @ConfigProperty(name = "shipping.carrier.timeout") Duration timeout) {
        this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl").replaceAll("/+$", "");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.http = new ProviderHttp(this.baseUrl, timeout);
    }

    /** See {@link ProviderHttp#longestExchange()}. */
    public Duration longestExchange() {
        return http.longestExchange();
    }

    /** The parcel's destination, in the carrier's terms. */
    public record Destination(String name, String line1, String line2, String city, String postalCode, String country) {
    }

    public sealed interface CreateResult {
    }

    /** The carrier holds a shipment for the idempotency key (new, or the one an earlier call created). */
    public record Created(String carrierShipmentId) implements CreateResult {
    }

    /** The carrier refuses the shipment for good (422). */
    public record Rejected(String reason) implements CreateResult {
    }

    /**
     * No shipment this time.
     *
     * @param uncertain true if the call may have reached the carrier and its answer was lost (timeout, broken
     *                  connection, a 5xx other than 503): a shipment may exist under the idempotency key; false if
     *                  the carrier certainly created nothing (503, connection refused)
     */
    public record Unavailable(String reason, boolean uncertain) implements CreateResult {
    }

    public sealed interface LookupResult {
    }

    public record Found(String carrierShipmentId, String status) implements LookupResult {
    }

    public record NotFound() implements LookupResult {
    }

    /** @param refused the carrier answered, refusing the lookup ({@link Answer#refusal}), rather than not at all */
    public record LookupFailed(String reason, boolean refused) implements LookupResult {
    }

    public sealed interface CancelResult {
    }

    public record Cancelled() implements CancelResult {
    }

    /** The carrier has no shipment with this id (404): there is nothing to cancel. */
    public record UnknownShipment() implements CancelResult {
    }

    /** @param refused the carrier answered, refusing the cancel ({@link Answer#refusal}), rather than not at all */
    public record CancelFailed(String reason, boolean refused) implements CancelResult {
    }


    /** POST /v1/shipments with {@code Idempotency-Key: <idempotencyKey>}. */
    public CreateResult create(String idempotencyKey, String reference, Destination destination) {
        String body = write(Map.of("reference", reference, "address", destination));
        Answer response;
        try {
            response = http.exchange("POST", "/v1/shipments", Map.of("Idempotency-Key", idempotencyKey), body);
        } catch (IOException e) {
            return new Unavailable(failure(e), !(e instanceof ProviderHttp.NotConnected));
        }
        int status = response.status();
        if (status == 200 || status == 201) {
            String carrierId = field(response.body(), "shipmentId");
            return ProviderIds.keepable(carrierId, ID_WIDTH) ? new Created(carrierId)
                    : new Unavailable("carrier answered " + status + " with "
                            + ProviderIds.whyNotKept(carrierId, ID_WIDTH) + " for the shipment", true);
        }
        if (status == 422) {
            String reason = field(response.body(), "reason");
            return new Rejected(reason == null ? "rejected by the carrier" : reason);
        }
        // 503 is the carrier saying it did nothing; any other 5xx may have done something
        boolean uncertain = status >= 500 && status != 503;
        return new Unavailable("carrier answered " + status + describe(response.body()), uncertain);
    }

    /** GET /v1/shipments/{idempotencyKey}: the shipment an earlier create call made, if any. */
    public LookupResult find(String idempotencyKey) {
        Answer response;
        try {
            response = http.exchange("GET", "/v1/shipments/" + encode(idempotencyKey), Map.of(), null);
        } catch (IOException e) {
            return new LookupFailed(failure(e), false);
        }
        int status = response.status();
        if (status == 200) {
            String carrierId = field(response.body(), "shipmentId");
            return ProviderIds.keepable(carrierId, ID_WIDTH) ? new Found(carrierId, field(response.body(), "status"))
                    : new LookupFailed("carrier answered 200 with " + ProviderIds.whyNotKept(carrierId, ID_WIDTH)
                            + " for the shipment", true);
        }
        if (status == 404) {
            return new NotFound();
        }
        return new LookupFailed("carrier answered " + status + describe(response.body()), response.refusal());
    }

    /**
     * POST /v1/shipments/{carrierShipmentId}/cancel under the parcel's cancel key ({@link #cancelKey}): one a parcel,
     * whoever asks (a shipment's cancellation, or the cancel of a second parcel), so that asking twice to cancel one
     * parcel is one cancellation, and a cancellation that goes on to another parcel under the same create key (a
     * lookup under a key the carrier forgot found a second one) is not answered with the first.
     */
    public CancelResult cancel(String carrierShipmentId) {
        return cancel(carrierShipmentId, cancelKey(carrierShipmentId));
    }

    public static String cancelKey(String carrierShipmentId) {
        return "cancel-" + carrierShipmentId;
    }

    /** As {@link #cancel(String)}, under any key: a carrier's answer for another shipment is shown with one. */
    CancelResult cancel(String carrierShipmentId, String idempotencyKey) {
        Answer response;
        try {
            response = http.exchange("POST", "/v1/shipments/" + encode(carrierShipmentId) + "/cancel",
                    Map.of("Idempotency-Key", idempotencyKey), "");
        } catch (IOException e) {
            return new CancelFailed(failure(e), false);
        }
        int status = response.status();
        if (status == 200 || status == 201) {
            String answeredFor = field(response.body(), "shipmentId");
            if (answeredFor != null && !answeredFor.equals(carrierShipmentId)) {
                // the carrier replayed what the key did first: this shipment was not cancelled
                return new CancelFailed("carrier answered the cancel of " + carrierShipmentId + " with shipment "
                        + answeredFor + ": idempotency key " + idempotencyKey + " cancelled another shipment before",
                        true);
            }
            return new Cancelled();
        }
        if (status == 404) {
            return new UnknownShipment();
        }
        return new CancelFailed("carrier answered " + status + describe(response.body()), response.refusal());
    }

    /** A shipment the carrier created, as its shipment report lists it, with its status now. */
    public record ReportedShipment(String carrierShipmentId, String idempotencyKey, String status) {

        public boolean live() {
            return !"cancelled".equals(status);
        }
    }

    /**
     * GET /v1/reports/shipments: the shipments the carrier created, in the order it did, from {@code cursor} (an
     * earlier page's {@code next}) or, without one, from {@code since}. Empty when the carrier gave no usable answer:
     * the next read starts from the same place.
     */
    public Optional<ProviderReport.Page<ReportedShipment>> shipments(String cursor, Instant since, int limit) {
        Answer response;
        try {
            response = http.exchange("GET", "/v1/reports/shipments?" + ProviderReport.query(cursor, since, limit), Map.of(),
                    null);
        } catch (IOException e) {
            LOG.infof("Shipment report not read: %s", failure(e));
            return Optional.empty();
        }
        Optional<ProviderReport.Page<ReportedShipment>> page = response.status() != 200 ? Optional.empty()
                : ProviderReport.Page.fromJson(tree(response.body()), "shipments", entry -> {
                    String carrierId = ProviderReport.text(entry, "shipmentId");
                    String key = ProviderReport.text(entry, "idempotencyKey");
                    if (key != null && !ProviderIds.keepable(carrierId, ID_WIDTH)) {
                        // recorded, it would stop every read at its page: passed over, for a person to look at
                        LOG.errorf("ALERT carrier report: the shipment under key %s has %s; passed over", key,
                                ProviderIds.whyNotKept(carrierId, ID_WIDTH));
                        return null;
                    }
                    return key == null ? null
                            : new ReportedShipment(carrierId, key, ProviderReport.text(entry, "status"));
                });
        if (page.isEmpty()) {
            LOG.warnf("Shipment report not read: the carrier answered %d%s", response.status(), describe(response.body()));
        }
        return page;
    }

    private String failure(IOException e) {
        if (e instanceof ProviderHttp.NotConnected && e.getCause() instanceof SocketTimeoutException) {
            return "no connection to the carrier within " + timeout.toMillis() + " ms";
        }
        if (e instanceof ProviderHttp.NoAnswerInTime) {
            return "no answer from the carrier within " + timeout.toMillis() + " ms";
        }
        return "carrier unreachable: " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage());
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String write(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot encode carrier request", e);
        }
    }

    private static String field(String body, String name) {
        JsonNode node = tree(body);
        JsonNode value = node == null ? null : node.get(name);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static JsonNode tree(String body) {
        try {
            return JSON.readTree(body == null ? "" : body);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static String describe(String body) {
        String reason = field(body, "reason");
        if (reason == null) {
            reason = field(body, "error");
        }
        return reason == null ? "" : ": " + reason;
    }
}
