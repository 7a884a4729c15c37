package dev.ordersaga.payment.domain;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * How long a declined charge, or one abandoned for a cancelled order (a call that got no answer may still create it),
 * is watched for a late settlement: {@code looks} status queries, the first {@code firstLook} after the decline or
 * abandonment and each further one twice as far from the one before. The provider's webhook tells of a late settlement
 * too, but a webhook can be lost (the provider gives up after a few failed deliveries); without these looks the
 * customer would stay charged for a cancelled order and nothing would tell.
 */
public record SettlementWatch(Duration firstLook, int looks) {

    public SettlementWatch {
        Objects.requireNonNull(firstLook, "firstLook");
        if (firstLook.isNegative() || firstLook.isZero()) {
            throw new IllegalArgumentException("firstLook must be positive: " + firstLook);
        }
        if (looks < 0 || looks > 30) {
            throw new IllegalArgumentException("looks must be 0..30: " + looks);
        }
    }

    /** When to look next, {@code looksMade} looks after the decline (or abandonment); null once the watch is over. */
    Instant nextLook(Instant now, int looksMade) {
        return looksMade >= looks ? null : now.plus(firstLook.multipliedBy(1L << looksMade));
    }

    /** From the first look to the last: how late a settlement is still found without its webhook. */
    public Duration window() {
        return firstLook.multipliedBy((1L << looks) - 1);
    }
}
