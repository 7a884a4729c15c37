package dev.ordersaga.payment.application;

import dev.ordersaga.eventing.TransactionalWrites;
import dev.ordersaga.testing.LogCapture;
import dev.ordersaga.testing.StackTestResource;
import dev.ordersaga.work.ProviderReport;
import dev.ordersaga.work.ProviderReport.Page;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a provider's report is read on (work/ProviderReport, in common-events), against a provider of the test's making
 * whose cursor is the position of its next entry, and the service's real database.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
class ProviderReportTest {

    private static final Duration LOOK_BACK = Duration.ofHours(1);

    @Inject
    TransactionalWrites writes;

    /** A report of entries 0, 1, 2, … that notes every read and can be made to give no answer. */
    static final class Provider implements ProviderReport.Source<Integer> {
        final List<Integer> entries = new ArrayList<>();
        final List<String> reads = new ArrayList<>();
        boolean answering = true;
        /** Before each cursor's position: a provider's cursor is opaque, and may be long. */
        String cursorPrefix = "";
        /** An entry no page that holds it is given for: a stretch of the report the provider keeps failing. */
        int unanswered = -1;

        @Override
        public Optional<Page<Integer>> read(String cursor, Instant since, int limit) {
            reads.add(cursor == null ? "since " + since : cursor);
            if (!answering) {
                return Optional.empty();
            }
            int from = cursor == null ? 0 : Integer.parseInt(cursor.substring(cursorPrefix.length()));
            int to = Math.min(from + limit, entries.size());
            if (from <= unanswered && unanswered < to) {
                return Optional.empty();
            }
            return Optional.of(new Page<>(List.copyOf(entries.subList(from, to)), cursorPrefix + to,
                    to < entries.size()));
        }
    }

    @Test
    void aReadTellsWhatItAppliedOverAllItsPages() {
        Provider provider = new Provider();
        ProviderReport<Integer> report = new ProviderReport<>(name(), provider, writes, LOOK_BACK, Duration.ZERO, 2);
        provider.entries.addAll(List.of(0, 1, 2));

        assertThat(report.readOnApplying(page -> page.stream().filter(entry -> entry != 1).toList()))
                .as("what the two pages applied, 1 passed over").containsExactly(0, 2);
        assertThat(provider.reads).hasSize(2);
    }

    @Test
    void eachEntryIsLookedAtInTwoReadsPageByPageAndAReadGoesOnFromTheReadBeforeTheLast() {
        Provider provider = new Provider();
        ProviderReport<Integer> report = new ProviderReport<>(name(), provider, writes, LOOK_BACK, Duration.ZERO, 2);
        List<Integer> seen = new ArrayList<>();

        provider.entries.addAll(List.of(0, 1, 2));
        assertThat(report.readOn(entries -> add(seen, entries))).isEqualTo(3);
        assertThat(provider.reads).hasSize(2).first().asString().startsWith("since ");
        provider.entries.addAll(List.of(3, 4));
        report.readOn(entries -> add(seen, entries));
        provider.entries.add(5);
        report.readOn(entries -> add(seen, entries));

        // each read starts where the one before the last ended, the second where the first did
        assertThat(seen).containsExactly(0, 1, 2, 0, 1, 2, 3, 4, 3, 4, 5);
        assertThat(provider.reads.get(2)).as("from the first read's start").isEqualTo(provider.reads.get(0));
    }

    /** Page tokens of some APIs run past 255 characters: such a cursor failed every save of the report's place. */
    @Test
    void aCursorOfAnyLengthIsKeptAndReadOnFrom() {
        Provider provider = new Provider();
        provider.cursorPrefix = "c".repeat(1000) + "-";
        ProviderReport<Integer> report = new ProviderReport<>(name(), provider, writes, LOOK_BACK, Duration.ZERO, 10);
        provider.entries.addAll(List.of(0, 1));
        report.readOn(List::size);
        provider.entries.add(2);
        report.readOn(List::size);
        report.readOn(List::size);

        assertThat(provider.reads).hasSize(3);
        assertThat(provider.reads.get(2)).as("from where the first run ended").isEqualTo(provider.cursorPrefix + 2);
    }

    /**
     * A page the provider keeps failing two pages in: each run reads the pages before it and stops there. Counted as
     * read, such runs reset the count each time and the alarm never came, while the news after it went unheard.
     */
    @Test
    void runsThatStopAtAPageTheProviderKeepsFailingRaiseTheAlarmAsUnreadOnesDo() {
        Provider provider = new Provider();
        provider.entries.addAll(List.of(0, 1, 2, 3, 4, 5));
        provider.unanswered = 4;
        String name = name();
        ProviderReport<Integer> report = new ProviderReport<>(name, provider, writes, LOOK_BACK, Duration.ZERO, 2);
        try (LogCapture log = LogCapture.of(ProviderReport.class)) {
            for (int run = 1; run <= 5; run++) {
                report.readOn(List::size);
            }
            assertThat(log.containing("ALERT report " + name + " not read in 5 runs in a row")).hasSize(1);
        }
        provider.unanswered = -1;
        assertThat(report.readOn(List::size)).as("the whole report, once the provider answers").isEqualTo(6);
    }

    @Test
    void aReadMomentsAfterAnotherOneReadsNothingSoThatReplicasKeepTheSecondLookARunApart() {
        Provider provider = new Provider();
        provider.entries.add(0);
        String name = name();
        new ProviderReport<>(name, provider, writes, LOOK_BACK, Duration.ZERO, 10).readOn(List::size);
        ProviderReport<Integer> replica = new ProviderReport<>(name, provider, writes, LOOK_BACK, Duration.ofMinutes(1), 10);

        assertThat(replica.readOn(List::size)).isZero();
        assertThat(provider.reads).hasSize(1);
    }

    @Test
    void aReportUnreadRunAfterRunIsReadFromBeforeTheLastReadAndThenRaisesTheAlarm() {
        Provider provider = new Provider();
        provider.entries.addAll(List.of(0, 1));
        ProviderReport<Integer> report = new ProviderReport<>(name(), provider, writes, LOOK_BACK, Duration.ZERO, 10);
        report.readOn(List::size);
        report.readOn(List::size);
        provider.answering = false;
        try (LogCapture log = LogCapture.of(ProviderReport.class)) {
            for (int run = 1; run <= 5; run++) {
                report.readOn(List::size);
            }
            // three runs from the stored cursor, then from an hour before the last read (the cursor may be refused)
            assertThat(provider.reads.subList(2, 7)).startsWith("2", "2", "2");
            assertThat(provider.reads.subList(5, 7)).allSatisfy(read -> assertThat(read).startsWith("since "));
            assertThat(log.containing("ALERT report")).hasSize(1);
        }
        provider.answering = true;
        provider.entries.add(2);
        assertThat(report.readOn(List::size)).as("read again from before the last read").isEqualTo(3);
        // and looked at again from there: the cursor that may have been refused is not read from again
        int before = provider.reads.size();
        report.readOn(List::size);
        assertThat(provider.reads.get(before)).startsWith("since ");
    }

    @Test
    void itsGaugeCountsTheRunsInARowThatReadNothingFromZeroAtTheStartBackToZeroOnceOneReads() {
        FailedFiveTimes failed = failedFiveTimes();

        failed.provider().answering = true;
        assertThat(failed.report().readOn(List::size)).isEqualTo(1);
        assertThat(failed.runs().value()).isZero();
    }

    @Test
    void aReplicaWhoseRunsFailedCountsNoneOnceAnotherOneReadTheReport() {
        // with the configured minimum gap (30 s): its next run comes moments after the other replica's read
        FailedFiveTimes replica = failedFiveTimes();

        replica.provider().answering = true;
        ProviderReport<Integer> other = new ProviderReport<>(replica.name(), replica.provider(), writes, LOOK_BACK,
                Duration.ZERO, 10);
        assertThat(other.readOn(List::size)).isEqualTo(1);
        assertThat(replica.report().readOn(List::size)).as("within the gap: nothing read").isZero();
        assertThat(replica.runs().value()).as("the report was read: no alert stays on").isZero();
    }

    @Test
    void aReportConfiguredAfterTheLastOneRemovedItsGaugeIsCountedByAGaugeOfItsOwn() {
        // as when Quarkus restarts the application in one JVM and the registry outlives it
        Provider provider = new Provider();
        provider.answering = false;
        MeterRegistry meters = new SimpleMeterRegistry();
        String name = name();
        ProviderReport<Integer> before = ProviderReport.configured("test.report", name, provider, writes, meters);
        before.readOn(List::size);
        before.removeGauge();
        assertThat(meters.find("saga.provider.report.failed.runs").gauges()).isEmpty();

        ProviderReport<Integer> after = ProviderReport.configured("test.report", name, provider, writes, meters);
        Gauge runs = meters.get("saga.provider.report.failed.runs").tag("report", name).gauge();
        assertThat(runs.value()).as("the new report's runs, not the one before's").isZero();
        after.readOn(List::size);
        assertThat(runs.value()).isEqualTo(1);
    }

    /** A report as the services configure it, its gauge in meters of its own, and its provider's answers. */
    private record FailedFiveTimes(Provider provider, String name, ProviderReport<Integer> report, Gauge runs) {
    }

    /** Five runs of a configured report whose provider did not answer, its gauge read before and after them. */
    private FailedFiveTimes failedFiveTimes() {
        Provider provider = new Provider();
        provider.entries.add(0);
        provider.answering = false;
        MeterRegistry meters = new SimpleMeterRegistry();
        String name = name();
        ProviderReport<Integer> report = ProviderReport.configured("test.report", name, provider, writes, meters);
        Gauge runs = meters.get("saga.provider.report.failed.runs").tag("report", name).gauge();
        assertThat(runs.value()).as("there before any run, at 0").isZero();
        for (int run = 1; run <= 5; run++) {
            report.readOn(List::size);
        }
        assertThat(runs.value()).as("what an alert rule reads where the log has its ALERT").isEqualTo(5);
        return new FailedFiveTimes(provider, name, report, runs);
    }

    @Test
    void aScheduledRunWhoseEntriesFailIsLoggedAndTheNextOneReadsTheSamePagesAgain() {
        Provider provider = new Provider();
        provider.entries.addAll(List.of(0, 1));
        ProviderReport<Integer> report = new ProviderReport<>(name(), provider, writes, LOOK_BACK, Duration.ZERO, 10);
        List<Integer> seen = new ArrayList<>();

        try (LogCapture log = LogCapture.of(ProviderReport.class)) {
            report.readOnScheduled(entries -> {
                throw new IllegalStateException("the database went away");
            });
            assertThat(log.containing("this read failed")).hasSize(1);
        }
        report.readOnScheduled(entries -> add(seen, entries));

        assertThat(seen).containsExactly(0, 1);
        assertThat(provider.reads).hasSize(2).allSatisfy(read -> assertThat(read).startsWith("since "));
    }

    /** An entry that fails every time stops each run at its page, and the cursor with it: what follows is unheard. */
    @Test
    void runsWhoseEntriesFailEveryTimeRaiseTheAlarmAsUnreadOnesDo() {
        Provider provider = new Provider();
        provider.entries.addAll(List.of(0, 1));
        MeterRegistry meters = new SimpleMeterRegistry();
        String name = name();
        ProviderReport<Integer> report = ProviderReport.configured("test.report", name, provider, writes, meters);
        Gauge runs = meters.get("saga.provider.report.failed.runs").tag("report", name).gauge();

        try (LogCapture log = LogCapture.of(ProviderReport.class)) {
            for (int run = 1; run <= 5; run++) {
                // no run notes where it read to, so the minimum gap (30 s) skips none of them
                report.readOnScheduled(entries -> {
                    throw new IllegalArgumentException("a charge id longer than its column");
                });
            }
            assertThat(runs.value()).isEqualTo(5);
            assertThat(log.containing("ALERT report " + name + " not read in 5 runs in a row")).hasSize(1);
        }
        assertThat(report.readOn(List::size)).isEqualTo(2);
        assertThat(runs.value()).isZero();
    }

    private static int add(List<Integer> seen, List<Integer> entries) {
        seen.addAll(entries);
        return entries.size();
    }

    private static String name() {
        return "test-" + UUID.randomUUID();
    }
}
