package dev.ordersaga.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import java.time.Instant;
import java.util.UUID;

/**
 * JSON form of {@link EventEnvelope}. It owns its mapper rather than borrowing the application's, so that a
 * service's Jackson settings can never change the wire format of a contract.
 */
public final class EventCodec {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            // a consumer tolerates fields added by a newer producer
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            // money keeps its scale: 12.50 stays 12.50, never a double on the way
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES)
            .build();

    public static final int MAX_CORRELATION_ID = 128;

    private EventCodec() {
    }

    public static String encode(EventEnvelope<?> envelope) {
        try {
            return MAPPER.writeValueAsString(envelope);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot encode " + envelope.type(), e);
        }
    }

    /**
     * @throws MalformedEventException if the text is not an envelope of a known event type
     */
    public static EventEnvelope<SagaEvent> decode(String json) {
        JsonNode tree;
        try {
            tree = MAPPER.readTree(json);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new MalformedEventException("not JSON: " + e.getMessage(), e);
        }
        if (!(tree instanceof ObjectNode)) {
            throw new MalformedEventException("not a JSON object");
        }
        String type = text(tree, "type");
        Class<? extends SagaEvent> payloadClass = EventTypes.classOf(type)
                .orElseThrow(() -> new UnknownEventTypeException(type));
        try {
            JsonNode payloadNode = tree.get("payload");
            if (payloadNode == null || !payloadNode.isObject()) {
                throw new MalformedEventException("missing payload object");
            }
            JsonNode causation = tree.get("causationId");
            return new EventEnvelope<>(
                    UUID.fromString(text(tree, "eventId")),
                    type,
                    tree.path("version").asInt(EventTypes.CURRENT_VERSION),
                    Instant.parse(text(tree, "occurredAt")),
                    UUID.fromString(text(tree, "orderId")),
                    correlationId(tree),
                    causation == null || causation.isNull() ? null : UUID.fromString(causation.asText()),
                    MAPPER.treeToValue(payloadNode, payloadClass));
        } catch (JsonProcessingException | RuntimeException e) {
            if (e instanceof MalformedEventException malformed) {
                throw malformed;
            }
            throw new MalformedEventException("invalid " + type + ": " + e.getMessage(), e);
        }
    }

    /** Every service keeps it with each step (its inbox and its rows), in a column of {@value #MAX_CORRELATION_ID}. */
    private static String correlationId(JsonNode tree) {
        String id = text(tree, "correlationId");
        if (id.isBlank() || id.length() > MAX_CORRELATION_ID) {
            throw new MalformedEventException("correlationId must be 1 to " + MAX_CORRELATION_ID + " characters");
        }
        return id;
    }

    private static String text(JsonNode tree, String field) {
        JsonNode node = tree.get(field);
        if (node == null || node.isNull() || !node.isValueNode()) {
            throw new MalformedEventException("missing field '" + field + "'");
        }
        return node.asText();
    }
}
