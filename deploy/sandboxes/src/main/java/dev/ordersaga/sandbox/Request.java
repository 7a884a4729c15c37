package dev.ordersaga.sandbox;

import com.sun.net.httpserver.Headers;
import java.util.List;

/** What a handler needs of an HTTP call, read once so that handlers never touch the exchange. */
record Request(String method, String path, Headers headers, byte[] body, List<String> pathParams) {

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
}
