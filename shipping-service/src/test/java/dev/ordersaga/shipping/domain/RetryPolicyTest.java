package dev.ordersaga.shipping.domain;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RetryPolicyTest {

    private final RetryPolicy policy = new RetryPolicy(5, Duration.ofMillis(200), Duration.ofSeconds(5));

    @Test
    void delayDoublesFromTheBaseAndIsCapped() {
        assertThat(IntStream.rangeClosed(1, 7).mapToObj(policy::delayAfter)).containsExactly(
                Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800), Duration.ofMillis(1600),
                Duration.ofMillis(3200), Duration.ofSeconds(5), Duration.ofSeconds(5));
    }

    @Test
    void nonsenseIsRefused() {
        assertThatThrownBy(() -> new RetryPolicy(0, Duration.ofMillis(200), Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new RetryPolicy(3, Duration.ofSeconds(10), Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
