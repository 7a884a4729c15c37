package dev.ordersaga.order.application;

import dev.ordersaga.events.Ids;
import dev.ordersaga.order.domain.OrderStatus;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.PersistenceException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sagas that stopped moving without anyone being told. In a choreography no component owns a saga's progress: an
 * order whose next event was parked as a poison message, lost with a broker's data, or never sent by a participant's
 * bug sits in PENDING, STOCK_RESERVED, PAID or COMPENSATING for ever, and nothing else would notice. An open order
 * that waits for no operator and of which nothing was heard (no change, no event in its timeline) for longer than
 * {@code order.stalled-after} is stalled: counted in {@code saga_orders_stalled}, logged as {@code STALLED} at each
 * check, and listed for operators ({@code GET /operator/orders?stalled=true}).
 */
@ApplicationScoped
@Startup // its gauges exist from the start, for the alert rule (deploy/monitoring/alert-rules.yaml)
public class StalledSagas {

    private static final Logger LOG = Logger.getLogger(StalledSagas.class);

    /**
     * The open orders and the last entry of each one's timeline. No index serves it (one on the order's state would
     * make every transition of every saga update an index), so each check reads the orders table once. The window's
     * count is taken before the limit: every row carries how many there are in all.
     */
    private static final String STALLED = """
            SELECT o.id, o.status, o.correlation_id, greatest(o.updated_at, e.recorded_at) AS last_heard, e.type,
                   count(*) OVER () AS total
            FROM orders o
            LEFT JOIN LATERAL (SELECT recorded_at, type FROM saga_event WHERE order_id = o.id
                               ORDER BY seq DESC LIMIT 1) e ON true
            WHERE o.status NOT IN ('CONFIRMED', 'CANCELLED') AND o.waiting_reason IS NULL
              AND greatest(o.updated_at, e.recorded_at) < ?
              AND (greatest(o.updated_at, e.recorded_at), o.id) > (?, ?)
            ORDER BY last_heard, o.id
            LIMIT ?""";

    /** A saga that heard nothing since {@code lastHeardAt}; {@code lastEvent} is the last one it heard. */
    public record Stalled(UUID orderId, OrderStatus status, String correlationId, Instant lastHeardAt, String lastEvent) {
    }

    /** The longest silent of the stalled sagas, and how many there are in all. */
    public record Page(List<Stalled> sagas, long total) {
    }

    @Inject
    DataSource dataSource;

    @Inject
    MeterRegistry meters;

    /** Longer than any step's own retries take before they say so (a carrier's backoff ends in ShipmentOnHold). */
    @ConfigProperty(name = "order.stalled-after", defaultValue = "PT5M")
    Duration stalledAfter;

    private final AtomicLong count = new AtomicLong();
    private final AtomicLong oldestSeconds = new AtomicLong();
    private final List<Gauge> gauges = new ArrayList<>();

    @PostConstruct
    void registerGauges() {
        gauges.add(Gauge.builder("saga.orders.stalled", count, AtomicLong::get).register(meters));
        gauges.add(Gauge.builder("saga.orders.stalled.oldest.seconds", oldestSeconds, AtomicLong::get)
                .register(meters));
    }

    /**
     * The registry outlives the application where Quarkus restarts it in one JVM (tests of several profiles): a gauge
     * left behind would keep reading this instance's counts, NaN once they are collected, and the next instance's
     * registration would get it back rather than a gauge of its own.
     */
    @PreDestroy
    void removeGauges() {
        gauges.forEach(meters::remove);
        gauges.clear();
    }

    @Scheduled(every = "${order.stalled-check-every:60s}", delayed = "${order.stalled-check-delay:30s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void check() {
        Instant now = Instant.now();
        Page stalled = list(Instant.EPOCH, null, 1);
        count.set(stalled.total());
        if (stalled.sagas().isEmpty()) {
            oldestSeconds.set(0);
            return;
        }
        Stalled oldest = stalled.sagas().get(0);
        oldestSeconds.set(Duration.between(oldest.lastHeardAt(), now).toSeconds());
        LOG.warnf("STALLED: %d open saga(s) heard nothing for over %s; the oldest, order %s (correlation %s), is %s "
                        + "and last heard %s at %s", stalled.total(), stalledAfter, oldest.orderId(),
                oldest.correlationId(), oldest.status(), oldest.lastEvent(), oldest.lastHeardAt());
    }

    /**
     * The sagas that went silent at or after {@code since} and are stalled now, longest silent first (ties by id), at
     * most {@code limit} of them: what got stuck since a deploy or an incident. With {@code after} (the last row of a
     * page: its lastHeardAt and id), those after it.
     */
    public Page list(Instant since, UUID after, int limit) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement query = connection.prepareStatement(STALLED)) {
            query.setTimestamp(1, Timestamp.from(Instant.now().minus(stalledAfter)));
            query.setTimestamp(2, Timestamp.from(since));
            query.setObject(3, after == null ? Ids.BELOW_EVERY_ID : after);
            query.setInt(4, limit);
            List<Stalled> stalled = new ArrayList<>();
            long total = 0;
            try (ResultSet rows = query.executeQuery()) {
                while (rows.next()) {
                    stalled.add(new Stalled(rows.getObject(1, UUID.class), OrderStatus.valueOf(rows.getString(2)),
                            rows.getString(3), rows.getTimestamp(4).toInstant(), rows.getString(5)));
                    total = rows.getLong(6);
                }
            }
            return new Page(stalled, total);
        } catch (SQLException e) {
            // a database failure, as the operator's request is answered for one (503 when no connection was free)
            throw new PersistenceException("could not look for stalled sagas", e);
        }
    }
}
