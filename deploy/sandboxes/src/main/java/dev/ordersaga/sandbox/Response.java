package dev.ordersaga.sandbox;

import java.time.Duration;

/**
 * A JSON answer and how long to hold it back: the sandboxes simulate slow providers by answering late, not by
 * deciding late, so the delay travels with the answer.
 */
record Response(int status, Object body, Duration delay) {

    static Response json(int status, Object body) {
        return new Response(status, body, Duration.ZERO);
    }

    static Response error(ApiException e) {
        return json(e.status(), Json.object("error", e.getMessage()));
    }

    Response delayedBy(Duration extra) {
        return new Response(status, body, delay.plus(extra));
    }
}
