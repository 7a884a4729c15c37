package dev.ordersaga.sandbox;

import com.sun.net.httpserver.Headers;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/** What a handler needs of an HTTP call, read once so that handlers never touch the exchange. */
record Request(String method, String path, String rawQuery, Headers headers, byte[] body, List<String> pathParams) {

    static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    String idempotencyKey() {
        String key = headers.getFirst(IDEMPOTENCY_KEY);
        if (key == null || key.isBlank()) {
            throw ApiException.badRequest("the " + IDEMPOTENCY_KEY + " header is required");
        }
        return key;
    }

    /** The idempotency key for the log line, where a missing one is not an error. */
    String idempotencyKeyOrNull() {
        return headers.getFirst(IDEMPOTENCY_KEY);
    }

    <T> T body(Class<T> type) {
        return Json.read(body, type);
    }

    String pathParam(int index) {
        return pathParams.get(index);
    }

    /** The first value of a query parameter, decoded. */
    Optional<String> queryParam(String name) {
        if (rawQuery == null) {
            return Optional.empty();
        }
        for (String pair : rawQuery.split("&")) {
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            if (key.equals(name)) {
                return Optional.of(eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return Optional.empty();
    }
}
