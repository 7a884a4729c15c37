package dev.ordersaga.shipping.domain;

import dev.ordersaga.retry.Backoff;

import java.time.Duration;
import java.util.Objects;

/**
 * How often and how fast the carrier is asked again.
 *
 * @param maxAttempts failed create attempts after which the shipment waits for an operator
 * @param backoff     the wait after each failure: it doubles with every further failure, up to a cap
 */
public record RetryPolicy(int maxAttempts, Backoff backoff) {

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        Objects.requireNonNull(backoff, "backoff");
    }

    public RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay) {
        this(maxAttempts, new Backoff(baseDelay, maxDelay));
    }

    /** The wait after the given number of consecutive failures. */
    public Duration delayAfter(int failures) {
        return backoff.delayAfter(failures);
    }
}
