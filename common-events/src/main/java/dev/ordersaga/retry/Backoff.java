package dev.ordersaga.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * Exponential backoff: the n-th failed attempt waits {@code base * 2^(n-1)}, never more than {@code max}. The one
 * rule for every retry of the saga: a consumer's passing failure, an unresolved charge, a refund, a carrier call.
 */
public record Backoff(Duration base, Duration max) {

    public Backoff {
        Objects.requireNonNull(base, "base");
        Objects.requireNonNull(max, "max");
        if (base.isNegative() || base.isZero() || max.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff needs 0 < base <= max, got " + base + " and " + max);
        }
    }

    /** @param attempt the number of the attempt that just failed, from 1 */
    public Duration delayAfter(int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempts count from 1, got " + attempt);
        }
        int doublings = Math.min(attempt - 1, 30);
        long millis = base.toMillis();
        long cap = max.toMillis();
        for (int i = 0; i < doublings && millis < cap; i++) {
            millis *= 2;
        }
        return Duration.ofMillis(Math.min(millis, cap));
    }
}
