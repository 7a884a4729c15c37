package dev.ordersaga.work;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.eventing.SqlParameters;
import dev.ordersaga.eventing.TransactionalWrites;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.narayana.jta.QuarkusTransaction;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * A provider's report of what it did, read on from where the last read ended: a payment provider's settlements, a
 * carrier's shipments. It tells what no answer and no webhook told: a call that landed after its caller had given up
 * and asked, or whose webhook was lost. The service applies each entry it had not heard of as the answer would have
 * been applied.
 *
 * <p>The provider's cursor is kept in the service's database ({@code provider_report}), so that a restart reads on
 * from there; the first read starts {@code lookBack} ago. Each entry is looked at in two runs: a run reads from where
 * the run before the last one ended. A decision the service was committing while the first look read its row (a
 * decline, a look-up that found nothing) is then seen by the second. The provider is called outside any transaction.
 * A run within {@code minGap} of the last one (a replica's) reads nothing: the second look stays a run apart.
 *
 * <p>A report that cannot be read run after run is an {@code ALERT}: late news from the provider then goes unheard.
 * A run whose entries cannot be applied (one that throws every time) or whose end cannot be noted counts as unread.
 * Its gauge {@code saga_provider_report_failed_runs{report}}, the runs in a row that read nothing, lets an alert rule
 * see it too ({@code deploy/monitoring/alert-rules.yaml}). After a few such runs the stored cursor is given up (a
 * provider may refuse one for good, once it expired) and the report is read from {@code lookBack} before the last read
 * instead.
 *
 * @param <E> an entry of the report
 */
public final class ProviderReport<E> {

    /** A page of the report; {@code next} is the provider's cursor for the page after it. */
    public record Page<E>(List<E> entries, String next, boolean hasMore) {

        /**
         * A page as the providers answer it: the entries under {@code field}, {@code next} and {@code hasMore}. Empty
         * if the answer is not such a page; an entry {@code entry} makes nothing of (null) is left out.
         */
        public static <E> Optional<Page<E>> fromJson(JsonNode answer, String field, Function<JsonNode, E> entry) {
            JsonNode entries = answer == null ? null : answer.get(field);
            JsonNode next = answer == null ? null : answer.get("next");
            if (entries == null || !entries.isArray() || next == null || !next.isTextual()) {
                return Optional.empty();
            }
            List<E> read = new ArrayList<>();
            for (JsonNode node : entries) {
                E value = entry.apply(node);
                if (value != null) {
                    read.add(value);
                }
            }
            return Optional.of(new Page<>(read, next.asText(), answer.path("hasMore").asBoolean(false)));
        }
    }

    /** The query of a read of a page: from {@code cursor}, or without one from {@code since}. */
    public static String query(String cursor, Instant since, int limit) {
        return (cursor != null ? "cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8)
                : "since=" + URLEncoder.encode(since.toString(), StandardCharsets.UTF_8)) + "&limit=" + limit;
    }

    /** The text of a field of a report's entry; null if it has none. */
    public static String text(JsonNode entry, String field) {
        JsonNode value = entry.get(field);
        return value != null && value.isTextual() ? value.asText() : null;
    }

    /** Reads a page from {@code cursor} or, without one, from {@code since}; empty without a usable answer. */
    @FunctionalInterface
    public interface Source<E> {
        Optional<Page<E>> read(String cursor, Instant since, int limit);
    }

    /** Applies the entries of a page the service had not heard of; returns how many it applied. */
    @FunctionalInterface
    public interface Entries<E> {
        int apply(List<E> entries);
    }

    private static final Logger LOG = Logger.getLogger(ProviderReport.class);
    /** Pages a run reads at most: a long backlog is read over several runs, not in one that never ends. */
    private static final int MAX_PAGES_A_RUN = 100;
    /** Runs in a row that read nothing before the stored cursor is given up. */
    private static final int FRESH_START_AFTER = 3;
    /** Runs in a row that read nothing before each further one is an ALERT (the alert rule's threshold too). */
    private static final int ALERT_AFTER = 5;
    /** Stands for a cursor where the first read started, from an instant rather than a cursor. */
    private static final String SINCE = "since:";
    private static final String LOAD = "SELECT second_look_from, last_end, updated_at FROM provider_report WHERE name = ?";
    private static final String SAVE = """
            INSERT INTO provider_report (name, second_look_from, last_end, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET second_look_from = EXCLUDED.second_look_from, last_end = EXCLUDED.last_end,
                updated_at = EXCLUDED.updated_at""";

    private record Position(String secondLookFrom, String lastEnd, Instant readAt) {
    }

    private final String name;
    private final Source<E> source;
    private final TransactionalWrites writes;
    private final Duration lookBack;
    private final Duration minGap;
    private final int pageSize;
    /** Written under the read's lock, read by the gauge whenever metrics are scraped. */
    private volatile int failedRuns;
    private MeterRegistry meters;
    private Gauge failedRunsGauge;

    public ProviderReport(String name, Source<E> source, TransactionalWrites writes, Duration lookBack, Duration minGap,
                          int pageSize) {
        if (pageSize < 1) {
            throw new IllegalArgumentException("pageSize must be positive: " + pageSize);
        }
        this.name = name;
        this.source = source;
        this.writes = writes;
        this.lookBack = lookBack;
        this.minGap = minGap;
        this.pageSize = pageSize;
    }

    /**
     * {@link #readOn} for a scheduled run: a read that fails (the service's database away, an entry that throws) is
     * logged, and the next run reads from the same place, since the cursor moves only once a run's pages are applied.
     */
    public void readOnScheduled(Entries<E> entries) {
        try {
            readOn(entries);
        } catch (RuntimeException e) {
            LOG.warnf("Report %s: this read failed (%s); the next one reads from the same place", name, e.toString());
        }
    }

    /**
     * A report read as configured under {@code prefix}: {@code .look-back} (default PT1H), {@code .min-gap} (default
     * PT30S) and {@code .page-size} (default 500), so that each service names its own properties and none repeats
     * them; its gauge of failed runs is registered with {@code meters} at once, at 0.
     */
    public static <E> ProviderReport<E> configured(String prefix, String name, Source<E> source,
                                                   TransactionalWrites writes, MeterRegistry meters) {
        Config config = ConfigProvider.getConfig();
        ProviderReport<E> report = new ProviderReport<>(name, source, writes,
                config.getOptionalValue(prefix + ".look-back", Duration.class).orElse(Duration.ofHours(1)),
                config.getOptionalValue(prefix + ".min-gap", Duration.class).orElse(Duration.ofSeconds(30)),
                config.getOptionalValue(prefix + ".page-size", Integer.class).orElse(500));
        // each replica reads the report and counts its own runs: alert on the maximum (a replica's runs within the
        // minimum gap of another's read nothing and count neither way)
        report.meters = meters;
        report.failedRunsGauge = Gauge.builder("saga.provider.report.failed.runs", report, r -> r.failedRuns)
                .description("Runs in a row that read nothing of the provider's report (an ALERT from "
                        + ALERT_AFTER + ")")
                .tag("report", name)
                .strongReference(true)
                .register(meters);
        return report;
    }

    /**
     * Takes its gauge out of the registry, for its owner to call when it is destroyed. The registry outlives the
     * application where Quarkus restarts it in one JVM (tests of several profiles): the next report's registration
     * would get this gauge back, reading this report's runs, rather than a gauge of its own.
     */
    public void removeGauge() {
        if (failedRunsGauge != null) {
            meters.remove(failedRunsGauge);
            failedRunsGauge = null;
        }
    }

    /**
     * {@link #readOn} with pages applied as {@code entries} says, which returns what it applied of each (the ids of the
     * rows it changed): what the whole read applied, in the order applied.
     */
    public <A> List<A> readOnApplying(Function<List<E>, List<A>> entries) {
        List<A> applied = new ArrayList<>();
        readOn(page -> {
            List<A> ofPage = entries.apply(page);
            applied.addAll(ofPage);
            return ofPage.size();
        });
        return applied;
    }

    /** Reads the report on from where it was read to; returns how many entries were applied. */
    public synchronized int readOn(Entries<E> entries) {
        Optional<Position> position = writes.readOneCommitted(
                new TransactionalWrites.Write(LOAD, 1, (statement, first) -> statement.setString(first, name)),
                row -> new Position(row.getString(1), row.getString(2), SqlParameters.getInstant(row, 3)),
                () -> "read where report " + name + " was read to");
        Instant now = Instant.now();
        if (position.isPresent() && position.get().readAt().isAfter(now.minus(minGap))) {
            // read moments ago, by another replica as a rule: the report reads again, whatever this one's runs met
            // meanwhile (left counting, its gauge would keep the alert on once the provider is back)
            failedRuns = 0;
            return 0;
        }
        String cursor = position.map(Position::secondLookFrom).orElse(null);
        Instant since = now.minus(lookBack);
        if (cursor != null && cursor.startsWith(SINCE)) {
            // the second look at the first read, which had no cursor to start from
            since = Instant.parse(cursor.substring(SINCE.length()));
            cursor = null;
        }
        // where the next run looks again: where this one ends, unless this one starts afresh from an instant
        String lookAgainFrom = position.map(Position::lastEnd).orElse(null);
        if (cursor != null && failedRuns >= FRESH_START_AFTER) {
            LOG.warnf("Report %s: not read in %d runs in a row; reading it from %s before the last read instead of from "
                    + "the provider's cursor", name, failedRuns, lookBack);
            cursor = null;
            since = position.get().readAt().minus(lookBack);
            lookAgainFrom = null;
        }
        String end = null;
        boolean cutShort = false;
        int applied = 0;
        try {
            for (int pages = 0; pages < MAX_PAGES_A_RUN; pages++) {
                Optional<Page<E>> page = source.read(cursor, since, pageSize);
                if (page.isEmpty()) {
                    cutShort = end != null;
                    break;
                }
                applied += entries.apply(page.get().entries());
                cursor = page.get().next();
                end = cursor;
                if (!page.get().hasMore()) {
                    break;
                }
            }
            if (end == null) {
                failedRun();
                return applied;
            }
            Position next = new Position(lookAgainFrom != null ? lookAgainFrom : SINCE + since, end, now);
            QuarkusTransaction.requiringNew().run(() -> writes.write(SAVE, statement -> {
                statement.setString(1, name);
                statement.setString(2, next.secondLookFrom());
                statement.setString(3, next.lastEnd());
                SqlParameters.setInstant(statement, 4, Instant.now());
            }, () -> "note where report " + name + " was read to"));
        } catch (RuntimeException e) {
            // an entry that fails every time (a value its row refuses) stops each run at its page, and the cursor
            // with it: the news after it goes unheard as surely as if the provider did not answer
            failedRun();
            throw e;
        }
        if (cutShort) {
            // a stretch of the report the provider keeps failing stops each run there, the news after it unheard as
            // surely as if no page came: the pages before it are kept, and the run counts as unread
            failedRun();
        } else {
            failedRuns = 0;
        }
        return applied;
    }

    private void failedRun() {
        failedRuns++;
        if (failedRuns >= ALERT_AFTER) {
            LOG.errorf("ALERT report %s not read in %d runs in a row: what the provider did and no answer told "
                    + "(a late settlement, a late create) goes unheard until it is read", name, failedRuns);
        }
    }
}
