package dev.ordersaga.order.application;

import dev.ordersaga.events.Ids;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class PlacedLatelyTest {

    private static final Instant NOW = Instant.now();

    @Test
    void anOrderIdMadeWithinAMinuteEitherWayMayStillBecomeVisible() {
        assertThat(OrderService.placedLately(madeAt(NOW), NOW)).isTrue();
        assertThat(OrderService.placedLately(madeAt(NOW.minusSeconds(50)), NOW)).isTrue();
        // made by a replica whose clock runs ahead
        assertThat(OrderService.placedLately(madeAt(NOW.plusSeconds(50)), NOW)).isTrue();
    }

    @Test
    void anOlderIdOrAnIdOfAnotherKindCannot() {
        assertThat(OrderService.placedLately(madeAt(NOW.minus(Duration.ofSeconds(61))), NOW)).isFalse();
        assertThat(OrderService.placedLately(madeAt(NOW.plus(Duration.ofSeconds(61))), NOW)).isFalse();
        assertThat(OrderService.placedLately(UUID.randomUUID(), NOW)).isFalse();
    }

    private static UUID madeAt(Instant at) {
        return Ids.timeOrdered(at.toEpochMilli());
    }
}
