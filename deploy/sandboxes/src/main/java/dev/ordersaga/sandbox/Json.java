package dev.ordersaga.sandbox;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The one ObjectMapper of the sandboxes. */
final class Json {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            // A real API ignores fields it does not know; the services may send more than the sandbox reads.
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            // 21.00 must come back as 21.00, not 21 or 2.1E+1: the services compare what they sent.
            .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
            .build();

    private Json() {
    }

    static <T> T read(byte[] body, Class<T> type) {
        if (body.length == 0) {
            throw ApiException.badRequest("a JSON body is required");
        }
        try {
            T value = MAPPER.readValue(body, type);
            if (value == null) {
                // the body "null": Jackson reads it as no object at all, which no route can take
                throw ApiException.badRequest("a JSON object body is required");
            }
            return value;
        } catch (JsonProcessingException e) {
            throw ApiException.badRequest("malformed JSON body: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] write(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * An ordered JSON object from alternating keys and values. A map rather than a record per answer, because
     * the sandbox answers in many small shapes and null values must stay visible (the webhook's "reason").
     */
    static Map<String, Object> object(Object... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("keys and values must come in pairs");
        }
        Map<String, Object> object = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            object.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return object;
    }
}
