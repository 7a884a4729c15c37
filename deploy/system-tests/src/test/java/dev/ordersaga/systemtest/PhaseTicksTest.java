package dev.ordersaga.systemtest;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A phase's CPU counts PostgreSQL processes that ended within it (autovacuum workers come and go in seconds) through
 * the postmaster's count of its reaped children, less what the phase's first reading had already seen of them.
 */
class PhaseTicksTest {

    @Test
    void aProcessThatEndedWithinThePhaseCountsOnlyItsTicksAfterTheFirstReading() {
        Map<String, Long> before = Map.of("order-service", 1000L, "postgres#10", 50L, "postgres#11", 30L,
                SagaBenchmark.ENDED, 400L);
        // #11 ended having used 30 + 20 ticks; #12 began and ended within the phase, 70 ticks; #13 began and lives
        Map<String, Long> after = Map.of("order-service", 1300L, "postgres#10", 80L, "postgres#13", 5L,
                SagaBenchmark.ENDED, 400L + 50 + 70);

        Map<String, Long> ticks = SagaBenchmark.phaseTicks(before, after);

        assertThat(ticks).containsEntry("order-service", 300L).containsEntry("postgres#10", 30L)
                .containsEntry("postgres#13", 5L).containsEntry(SagaBenchmark.ENDED, 20L + 70);
        assertThat(SagaBenchmark.cpuSecondsByProcess(before, after))
                .containsEntry("order-service", 3.0).containsEntry("postgres", (30 + 5 + 20 + 70) / 100.0);
    }

    @Test
    void withoutThePostmastersCountTheLivingAreCountedAsBefore() {
        Map<String, Long> ticks = SagaBenchmark.phaseTicks(Map.of("postgres#10", 50L, "postgres#11", 30L),
                Map.of("postgres#10", 80L));

        assertThat(ticks).containsOnly(Map.entry("postgres#10", 30L));
    }
}
