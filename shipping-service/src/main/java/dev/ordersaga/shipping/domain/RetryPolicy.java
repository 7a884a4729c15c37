package dev.ordersaga.shipping.domain;

import java.time.Duration;
import java.util.Objects;

/**
 * How often and how fast the carrier is asked again.
 *
 * @param maxAttempts failed create attempts after which the shipment waits for an operator
 * @param baseDelay   delay after the first failure; it doubles with every further failure
 * @param maxDelay    the delay never exceeds this
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay) {

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        Objects.requireNonNull(baseDelay, "baseDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        if (baseDelay.isNegative() || maxDelay.compareTo(baseDelay) < 0) {
            throw new IllegalArgumentException("need 0 <= baseDelay <= maxDelay");
        }
    }

    /** base * 2^(failures - 1), capped at maxDelay: the wait after the given number of consecutive failures. */
    public Duration delayAfter(int failures) {
        if (failures < 1) {
            throw new IllegalArgumentException("failures must be at least 1");
        }
        int doublings = failures - 1;
        if (doublings >= 62) {
            return maxDelay;
        }
        long factor = 1L << doublings;
        long baseNanos = baseDelay.toNanos();
        if (baseNanos != 0 && factor > Long.MAX_VALUE / baseNanos) {
            return maxDelay;
        }
        Duration delay = Duration.ofNanos(baseNanos * factor);
        return delay.compareTo(maxDelay) > 0 ? maxDelay : delay;
    }
}
