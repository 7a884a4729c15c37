package dev.ordersaga.retry;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BackoffTest {

    private final Backoff backoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(10));

    @Test
    void doublesFromTheBaseDelay() {
        assertThat(backoff.delayAfter(1)).isEqualTo(Duration.ofMillis(200));
        assertThat(backoff.delayAfter(2)).isEqualTo(Duration.ofMillis(400));
        assertThat(backoff.delayAfter(3)).isEqualTo(Duration.ofMillis(800));
        assertThat(backoff.delayAfter(6)).isEqualTo(Duration.ofMillis(6400));
    }

    @Test
    void isCappedForeverAfter() {
        assertThat(backoff.delayAfter(7)).isEqualTo(Duration.ofSeconds(10));
        assertThat(backoff.delayAfter(1_000)).isEqualTo(Duration.ofSeconds(10));
        assertThat(backoff.delayAfter(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void attemptsCountFromOne() {
        assertThatThrownBy(() -> backoff.delayAfter(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void needsAPositiveBaseNotAboveTheCap() {
        assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
    }
}
