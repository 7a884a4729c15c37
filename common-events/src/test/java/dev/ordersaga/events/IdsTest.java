package dev.ordersaga.events;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IdsTest {

    @Test
    void isAVersion7UuidOfTheIetfVariantCarryingItsMillisecond() {
        long before = System.currentTimeMillis();
        UUID id = Ids.timeOrdered();
        long after = System.currentTimeMillis();

        assertThat(id.version()).isEqualTo(7);
        assertThat(id.variant()).isEqualTo(2);
        assertThat(Ids.unixMillisOf(id)).isBetween(before, after);
        assertThat(UUID.fromString(id.toString())).isEqualTo(id);
    }

    @Test
    void idsOfALaterMillisecondSortAfterThoseOfAnEarlierOneAsPostgresqlComparesThem() {
        List<UUID> ids = new ArrayList<>();
        for (long millis = 1_764_000_000_000L; millis < 1_764_000_000_000L + 50; millis++) {
            ids.add(Ids.timeOrdered(millis));
        }
        // PostgreSQL orders uuid values by their bytes, unsigned, which their text form sorts the same way
        List<String> asText = ids.stream().map(UUID::toString).toList();
        assertThat(asText).isSorted();
    }

    @Test
    void manyIdsOfOneMillisecondAreDistinct() {
        Set<UUID> ids = new HashSet<>();
        for (int i = 0; i < 100_000; i++) {
            ids.add(Ids.timeOrdered(1_764_000_000_000L));
        }
        assertThat(ids).hasSize(100_000);
    }

    @Test
    void aRandomUuidHasNoMillisecond() {
        assertThatThrownBy(() -> Ids.unixMillisOf(UUID.randomUUID())).isInstanceOf(IllegalArgumentException.class);
    }
}
