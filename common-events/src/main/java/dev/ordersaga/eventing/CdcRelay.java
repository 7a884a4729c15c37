package dev.ordersaga.eventing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.common.annotation.Identifier;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Streams this service's outbox from PostgreSQL to Kafka with an embedded Debezium engine.
 *
 * <p>Several instances of a service may run; one slot can have one reader. So the instances elect a streamer
 * with a PostgreSQL advisory lock held on a dedicated session: the holder creates publication and slot (before
 * its engine starts, so no commit falls into a gap) and streams; the others poll the lock and take over when the
 * holder's session ends, which PostgreSQL notices as soon as its process dies.
 *
 * <p>Delivery is at-least-once: a record's offset is stored only after Kafka has acknowledged it and every record
 * before it (acks=all, idempotent producer; {@link PendingPublishes}); whatever was published after the last
 * stored offset is published again after a crash, and consumers absorb it in their inbox. A graceful stop
 * publishes nothing twice: before the engine closes, the relay waits for Kafka's acknowledgements and marks them
 * processed, and the engine stores that offset as it closes.
 */
@ApplicationScoped
public class CdcRelay {

    private static final Logger LOG = Logger.getLogger(CdcRelay.class);
    /**
     * What each heartbeat writes, on a connection of its own. PostgreSQL 15 decodes nothing of a transaction that
     * touches no published table, so while the outbox is quiet the engine's offset, which is all it confirms to the
     * slot, would stay at the last outbox commit, and the slot would hold every byte of WAL written since, by this
     * database and the cluster's others: a quiet service would fill the disk, or lose its slot at
     * max_slot_wal_keep_size. A transactional message is decoded with its commit, which moves the offset; the message
     * itself is passed over as every one is (message.prefix.exclude.list).
     */
    static final String HEARTBEAT_MESSAGE = "SELECT pg_logical_emit_message(true, 'order-saga-relay-heartbeat', '')";
    private static final String HEARTBEAT_TOPIC_PREFIX = "__debezium-heartbeat";
    private static final int KEEPALIVE_IDLE_SECONDS = 10;
    private static final int KEEPALIVE_INTERVAL_SECONDS = 3;
    private static final int KEEPALIVE_PROBES = 3;
    /** Records handed to Kafka and not yet acknowledged before the relay waits: bounds memory, not throughput. */
    private static final int MAX_PENDING = 10_000;
    private static final ObjectMapper OFFSETS = new ObjectMapper();

    @ConfigProperty(name = "eventing.relay.enabled", defaultValue = "true")
    boolean enabled;

    /** Short name of the service: names the slot, the publication and the lock. */
    @ConfigProperty(name = "eventing.service-name")
    String serviceName;

    @ConfigProperty(name = "quarkus.datasource.jdbc.url")
    String jdbcUrl;

    @ConfigProperty(name = "quarkus.datasource.username")
    String dbUser;

    @ConfigProperty(name = "quarkus.datasource.password")
    String dbPassword;

    /** Every kafka.* setting of the service, as its channels get them. */
    @Inject
    @Identifier("default-kafka-broker")
    Map<String, Object> kafkaBroker;

    @ConfigProperty(name = "eventing.relay.standby-poll-interval", defaultValue = "PT0.5S")
    Duration standbyPollInterval;

    @ConfigProperty(name = "eventing.relay.retry-backoff", defaultValue = "PT2S")
    Duration retryBackoff;

    /** How long a start waits for publication and slot: within Kubernetes' startup probe (3 minutes). */
    @ConfigProperty(name = "eventing.relay.prepare-deadline", defaultValue = "PT2M")
    Duration prepareDeadline;

    @ConfigProperty(name = "eventing.relay.offset-flush-interval", defaultValue = "PT1S")
    Duration offsetFlushInterval;

    /**
     * How often the engine emits a heartbeat: it marks the last acknowledged records of a burst processed, and, with
     * the logical decoding message it writes ({@link #HEARTBEAT_MESSAGE}), lets the slot follow the WAL while the
     * outbox is quiet.
     */
    @ConfigProperty(name = "eventing.relay.heartbeat-interval", defaultValue = "PT1S")
    Duration heartbeatInterval;

    /**
     * How long the engine sleeps, deaf to the slot, after five empty reads of it, and how long its queue waits for a
     * batch to fill. Each wait of the queue ends in a busy loop of up to a millisecond (its timer counts whole
     * milliseconds), so a short interval is paid in idle CPU: a fiftieth of a core at 50 ms, a twentieth at 20.
     * With the slot listened to ({@link #slotListen}), a commit waits for the sleep only if it falls into one.
     */
    @ConfigProperty(name = "eventing.relay.poll-interval", defaultValue = "PT0.05S")
    Duration pollInterval;

    /**
     * How long each of the engine's reads of an empty slot listens for a commit ({@link ListeningSlotSocketFactory})
     * before it counts as empty; zero keeps pgjdbc's own 1 ms check. With 200 ms and the 50 ms poll interval the
     * relay is deaf 50 ms in every 1050, and an idle one wakes about five times a second.
     */
    @ConfigProperty(name = "eventing.relay.slot-listen", defaultValue = "PT0.2S")
    Duration slotListen;

    /**
     * Debezium hands a batch over when it is full or when the poll interval has run out, so with batches larger
     * than one every event below full load waits out part of the interval in the engine's queue. A batch of one
     * is handed over as soon as it is read; the relay does not wait for Kafka's acknowledgement before taking the
     * next ({@link PendingPublishes}), so this costs no throughput (about 3400 events/s from one relay on the
     * benchmark machine). Larger batches only pay where a service publishes thousands of events a second.
     */
    @ConfigProperty(name = "eventing.relay.max-batch-size", defaultValue = "1")
    int maxBatchSize;

    /**
     * How long Kafka may stay away before an event handed to it counts as failed: the engine then stops and reads
     * everything from the last acknowledged event again once Kafka is back. Shorter only pays in restarts.
     */
    @ConfigProperty(name = "eventing.relay.delivery-timeout", defaultValue = "PT30S")
    Duration deliveryTimeout;


    /**
     * Fault injection for the crash tests: hold the first batch after it was read from the log and before it is
     * published, and log that it is held, so that a test can kill the process at exactly that point.
     */
    @ConfigProperty(name = "eventing.relay.fault.hold-before-publish", defaultValue = "false")
    boolean holdBeforePublish;

    /**
     * Fault injection for the duplicate-delivery tests: publish every event twice, as a relay that crashed after
     * publishing and before storing its offset would, on every single event.
     */
    @ConfigProperty(name = "eventing.relay.fault.publish-twice", defaultValue = "false")
    boolean publishTwice;

    @Inject
    MeterRegistry meters;

    private static final Duration PREPARE_STATEMENT_TIMEOUT = Duration.ofSeconds(20);

    private final AtomicReference<RelayRole> role = new AtomicReference<>(RelayRole.STOPPED);
    private final AtomicReference<String> lastError = new AtomicReference<>();
    private final CountDownLatch stopSignal = new CountDownLatch(1);
    /** Package-private for {@code RelayLivenessCheckTest}, which stands in an ended thread for one that died. */
    volatile Thread supervisor;
    private volatile DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
    private volatile KafkaProducer<String, String> producer;
    private final AtomicReference<KafkaProducer<String, String>> dropped = new AtomicReference<>();
    private PostgresTarget target;
    private Counter published;
    private Counter slotsLost;
    /**
     * When the slot was last lost, in seconds since the epoch (0: not since the start). A loss found at startup is
     * counted before HTTP opens, so the counter's first scrape already reads 1 and increase() never sees it rise.
     */
    private final AtomicLong slotLostAt = new AtomicLong();
    private Timer publishLatency;

    /**
     * First of the startup observers, before the scheduler's (its jobs write: the provider-call sweeps, the reports)
     * and SmallRye Reactive Messaging's; HTTP opens once they all returned. So the publication and slot are ready
     * before the service's first write.
     */
    void onStart(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE - 1) StartupEvent event) {
        if (!enabled) {
            role.set(RelayRole.DISABLED);
            LOG.info("CDC relay disabled by configuration");
            return;
        }
        target = PostgresTarget.fromJdbcUrl(jdbcUrl, dbUser, dbPassword);
        published = meters.counter("saga.relay.published");
        slotsLost = meters.counter("saga.relay.slot.lost");
        Gauge.builder("saga.relay.slot.lost.at", slotLostAt, AtomicLong::get).baseUnit("seconds").register(meters);
        publishLatency = Timer.builder("saga.relay.commit.to.publish").publishPercentiles(0.5, 0.99).register(meters);
        prepareBeforeWrites();
        supervisor = new Thread(this::supervise, "cdc-relay-" + serviceName);
        supervisor.start();
    }

    void onStop(@Observes ShutdownEvent event) {
        stopSignal.countDown();
        Thread t = supervisor;
        if (t != null) {
            try {
                t.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        role.set(enabled ? RelayRole.STOPPED : RelayRole.DISABLED);
    }

    public RelayRole role() {
        return role.get();
    }

    /**
     * Whether the supervising thread ended without being asked to stop: an error the loop does not survive (a class
     * missing, memory gone). Nothing streams again until the service restarts.
     */
    public boolean died() {
        Thread t = supervisor;
        return t != null && t.getState() == Thread.State.TERMINATED && !stopping();
    }

    public String lastError() {
        return lastError.get();
    }

    public String slotName() {
        return serviceName + "_outbox";
    }

    private String publicationName() {
        return serviceName + "_outbox";
    }

    private boolean stopping() {
        return stopSignal.getCount() == 0;
    }

    /** Waits for the given time or until the app stops; true if stopping. */
    private boolean pause(Duration duration) {
        try {
            return stopSignal.await(duration.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    /**
     * A row committed before its slot exists is never decoded, and the outbox keeps no rows to read again. Left to the
     * supervisor, the slot of a new database was created while HTTP and the consumers already wrote: the events of a
     * fresh deployment's first moments were lost. So the publication and slot are prepared here, before the service
     * takes a write; on a database that has them this is two reads. A failure is tried again until
     * {@link #prepareDeadline}, then the start fails: a service without its slot (slots used up, a role without
     * REPLICATION) would take writes that are never published. Each attempt's statements end within
     * {@link #PREPARE_STATEMENT_TIMEOUT} on the server's side, so a start killed while it waits (the slot's creation waits
     * for every running transaction) leaves no session behind.
     */
    private void prepareBeforeWrites() {
        Instant deadline = Instant.now().plus(prepareDeadline);
        while (true) {
            try (Connection session = DriverManager.getConnection(target.jdbcUrl(), target.user(), target.password())) {
                // it holds the prepare lock: a start whose host vanished meanwhile must not keep it for the kernel's
                // two hours of keepalive, every other relay of the service waiting on it
                probeThePeer(session);
                // a statement waits no longer than what is left of the deadline
                long left = Duration.between(Instant.now(), deadline).toMillis();
                long timeout = Math.max(1, Math.min(PREPARE_STATEMENT_TIMEOUT.toMillis(), left));
                try (Statement st = session.createStatement()) {
                    st.execute("SET statement_timeout = " + timeout);
                }
                prepareSlotExclusively(session);
                return;
            } catch (SQLException e) {
                lastError.set(e.toString());
                if (Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("CDC relay of " + serviceName + ": publication and slot "
                            + slotName() + " not prepared within " + prepareDeadline + "; the service takes no writes "
                            + "without them, since a row committed before its slot exists is never published", e);
                }
                LOG.warnf("CDC relay of %s: publication and slot not prepared yet (%s); trying again before the "
                        + "service starts", serviceName, e.toString());
                if (pause(retryBackoff)) {
                    return;
                }
            }
        }
    }

    /**
     * {@link #prepareSlot} under a lock of its own: a replica starting while the leader prepares (or another replica
     * starts) would otherwise find the slot missing too and create it twice, or drop what the other just made.
     */
    private void prepareSlotExclusively(Connection session) throws SQLException {
        String key = "cdc-relay-prepare:" + slotName();
        try (PreparedStatement lock = session.prepareStatement("SELECT pg_advisory_lock(hashtext(?))")) {
            lock.setString(1, key);
            lock.execute();
        }
        try {
            prepareSlot(session);
        } finally {
            try (PreparedStatement unlock = session.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
                unlock.setString(1, key);
                unlock.execute();
            }
        }
    }

    private void supervise() {
        try {
            while (!stopping()) {
                try (Connection lockSession = DriverManager.getConnection(target.jdbcUrl(), target.user(), target.password())) {
                    probeThePeer(lockSession);
                    if (!awaitLock(lockSession)) {
                        break;
                    }
                    role.set(RelayRole.STARTING);
                    // holding the relay lock, the prepare lock is waited for no longer than a prepare takes: a session
                    // that keeps it (a peer not yet found dead) must not hold this relay, and every standby, for ever
                    try (Statement st = lockSession.createStatement()) {
                        st.execute("SET lock_timeout = " + PREPARE_STATEMENT_TIMEOUT.multipliedBy(2).toMillis());
                    }
                    prepareSlotExclusively(lockSession);
                    try (Statement st = lockSession.createStatement()) {
                        st.execute("RESET lock_timeout");
                    }
                    stream(lockSession);
                } catch (Exception e) {
                    // the health check shows it: the engine's own error, not only that it stopped
                    lastError.set(e.getCause() == null ? e.toString() : e + ", caused by " + e.getCause());
                    LOG.errorf(e, "CDC relay of %s failed; retrying in %s", serviceName, retryBackoff);
                } finally {
                    closeProducer();
                }
                if (!stopping()) {
                    role.set(RelayRole.RECOVERING);
                    pause(retryBackoff);
                }
            }
        } catch (Error e) {
            // a class missing, memory gone: the loop does not survive it, and a relay that died quietly while its role
            // still read STREAMING would leave the service ready with nothing published
            lastError.set(e.toString());
            LOG.errorf(e, "ALERT CDC relay of %s stopped for good; the service must be restarted", serviceName);
            throw e;
        } finally {
            role.set(RelayRole.STOPPED);
        }
    }

    /**
     * The lock is released when PostgreSQL ends the holder's session, and it ends a session whose peer is gone only when
     * it notices: a killed process's kernel says so at once, but a host that lost power or its network says nothing,
     * and an idle session is then noticed by TCP keepalive, after two hours with the kernel's defaults. The holder
     * checks its session every second, so the server's side is never idle for long while it lives: probing after
     * {@value #KEEPALIVE_IDLE_SECONDS} s of silence, every {@value #KEEPALIVE_INTERVAL_SECONDS} s, {@value
     * #KEEPALIVE_PROBES} times, hands the stream to a standby about 20 s after its holder vanished.
     */
    private static void probeThePeer(Connection session) throws SQLException {
        try (Statement st = session.createStatement()) {
            st.execute("SET tcp_keepalives_idle = " + KEEPALIVE_IDLE_SECONDS);
            st.execute("SET tcp_keepalives_interval = " + KEEPALIVE_INTERVAL_SECONDS);
            st.execute("SET tcp_keepalives_count = " + KEEPALIVE_PROBES);
        }
    }

    /** Polls the relay lock; true once held, false if the app is stopping. */
    private boolean awaitLock(Connection session) throws SQLException {
        boolean announced = false;
        try (PreparedStatement tryLock = session.prepareStatement("SELECT pg_try_advisory_lock(hashtext(?))")) {
            tryLock.setString(1, "cdc-relay:" + slotName());
            while (!stopping()) {
                try (ResultSet rs = tryLock.executeQuery()) {
                    rs.next();
                    if (rs.getBoolean(1)) {
                        LOG.infof("CDC relay lock for slot %s acquired", slotName());
                        return true;
                    }
                }
                if (!announced) {
                    role.set(RelayRole.STANDBY);
                    LOG.infof("CDC relay standing by: another instance streams slot %s", slotName());
                    announced = true;
                }
                if (pause(standbyPollInterval)) {
                    return false;
                }
            }
        }
        return false;
    }

    /**
     * Publication and slot exist before the engine starts: an engine that creates its slot itself does so
     * asynchronously, and rows committed before the slot exists would never be streamed. A slot PostgreSQL invalidated
     * is replaced, loudly: the outbox keeps no rows, so what the lost WAL held cannot be read again, and waiting for an
     * operator would only lose more.
     */
    private void prepareSlot(Connection session) throws SQLException {
        try (Statement st = session.createStatement()) {
            if (!exists(session, "SELECT 1 FROM pg_publication WHERE pubname = ?", publicationName())) {
                // inserts only: the outbox deletes its rows in the inserting transaction
                st.execute("CREATE PUBLICATION " + publicationName() + " FOR TABLE outbox WITH (publish = 'insert')");
                LOG.infof("Created publication %s", publicationName());
            }
            if (slotInvalidated(session)) {
                alarmSlotLost("is invalidated: PostgreSQL removed WAL it still needed (max_slot_wal_keep_size), and the "
                        + "events committed after the last one it published are lost with it; their sagas stop and are "
                        + "listed as stalled. Re-creating the slot at once: every event committed while it stays "
                        + "invalidated would be lost too");
                // first, so that a crash before the new slot exists leaves no offset of the old one behind
                st.executeUpdate("DELETE FROM cdc_offset");
                try (PreparedStatement drop = session.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
                    drop.setString(1, slotName());
                    drop.execute();
                }
            }
            if (!exists(session, "SELECT 1 FROM pg_replication_slots WHERE slot_name = ?", slotName())) {
                // stored offsets point into the old slot's history, which a new slot does not have; forgotten first,
                // so that a crash before the new slot exists leaves none of them beside it
                int forgotten = st.executeUpdate("DELETE FROM cdc_offset");
                if (forgotten > 0) {
                    // the relay streamed from a slot that is gone: a failover to a standby (which has no logical
                    // slots before PostgreSQL 17), a restore, or a drop. What was committed between its last
                    // published event and the new slot is not decoded again.
                    alarmSlotLost("is gone though the relay streamed from it (failover, restore or drop); events "
                            + "committed since its last published one may be lost, and their sagas are listed as "
                            + "stalled. Creating it anew");
                }
                // at startup this holds the service back: said, so that a start that hangs here can be told apart
                LOG.infof("Creating replication slot %s: PostgreSQL waits for the transactions running now, in every "
                        + "database of the cluster, to end", slotName());
                try (PreparedStatement create = session.prepareStatement("SELECT pg_create_logical_replication_slot(?, 'pgoutput')")) {
                    create.setString(1, slotName());
                    create.execute();
                }
                LOG.infof("Created replication slot %s", slotName());
            } else {
                JsonNode offset = storedOffset(session);
                if (slotPassedTheStoredOffset(session, offset)) {
                    alarmSlotLost("is past the position the relay stored, where Debezium does not resume. Either it "
                            + "was moved on (an operator's pg_replication_slot_advance, a restore): the events "
                            + "committed in between are lost and their sagas are listed as stalled; or the relay "
                            + "confirmed them to the slot and stopped before it stored them: they were published. "
                            + "Streaming on from the slot's position");
                    st.executeUpdate("DELETE FROM cdc_offset");
                } else if (storedOffsetPastTheLog(session, offset)) {
                    // Debezium would ask the slot for nothing committed before that position, which this server's log
                    // reaches only later: every event until then would be passed over
                    LOG.errorf("CDC relay of %s: the stored offset %s is past the end of this server's log, so it was "
                            + "stored on another (a relay still storing while the database failed over to a standby "
                            + "that was behind); forgotten, streaming on from the position of slot %s", serviceName,
                            offset, slotName());
                    st.executeUpdate("DELETE FROM cdc_offset");
                }
            }
        }
    }

    /** The offset Debezium would resume from; null when none is stored or it cannot be read, which Debezium decides. */
    private JsonNode storedOffset(Connection session) throws SQLException {
        String offset;
        try (Statement st = session.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT offset_val FROM cdc_offset ORDER BY record_insert_ts DESC, record_insert_seq DESC LIMIT 1")) {
            offset = rs.next() ? rs.getString(1) : null;
        }
        try {
            return offset == null ? null : OFFSETS.readTree(offset);
        } catch (IOException unreadable) {
            LOG.warnf("CDC relay of %s: the stored offset is not JSON (%s); left to Debezium", serviceName, offset);
            return null;
        }
    }

    /**
     * Debezium resumes from a stored offset only while its slot still holds the WAL from there on (the slot's restart
     * point not past the offset's last completely processed position, {@code lsn_proc}), and otherwise refuses to
     * start: the relay would fail on it for ever. The same comparison as Debezium's, so an offset it would accept is
     * never forgotten. Not judged while another instance streams from the slot (an active slot cannot be moved, and
     * its offsets change under this read), nor on an offset this cannot read: Debezium then decides as before.
     */
    private boolean slotPassedTheStoredOffset(Connection session, JsonNode offset) throws SQLException {
        JsonNode processed = offset == null ? null : offset.get("lsn_proc");
        if (processed == null || !processed.canConvertToLong()) {
            return false;
        }
        try (PreparedStatement ps = session.prepareStatement("""
                SELECT restart_lsn - '0/0'::pg_lsn > ? FROM pg_replication_slots
                WHERE slot_name = ? AND NOT active""")) {
            ps.setBigDecimal(1, BigDecimal.valueOf(processed.asLong()));
            ps.setString(2, slotName());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /**
     * A relay stores its offsets on a connection of Debezium's own, which a relay that lost its lock may still use for
     * a few seconds while it stops: after a fail-over to a standby that was behind, it can store a position of the old
     * server's log after another relay has created the slot anew. No position of this server's log is past its end.
     * Not judged while another instance streams from the slot, as above.
     */
    private boolean storedOffsetPastTheLog(Connection session, JsonNode offset) throws SQLException {
        long furthest = -1;
        for (String position : List.of("lsn_proc", "lsn_commit", "lsn")) {
            JsonNode lsn = offset == null ? null : offset.get(position);
            if (lsn != null && lsn.canConvertToLong()) {
                furthest = Math.max(furthest, lsn.asLong());
            }
        }
        if (furthest < 0) {
            return false;
        }
        try (PreparedStatement ps = session.prepareStatement("""
                SELECT pg_current_wal_lsn() - '0/0'::pg_lsn < ? FROM pg_replication_slots
                WHERE slot_name = ? AND NOT active""")) {
            ps.setBigDecimal(1, BigDecimal.valueOf(furthest));
            ps.setString(2, slotName());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** Every way of losing the slot is told the same way, so that one alert rule and one counter catch them all. */
    private void alarmSlotLost(String what) {
        slotsLost.increment();
        slotLostAt.set(Instant.now().getEpochSecond());
        LOG.errorf("ALERT CDC relay of %s: replication slot %s %s", serviceName, slotName(), what);
    }

    /** The slot can never stream again: no reader can resume from a position whose WAL is gone. */
    private boolean slotInvalidated(Connection session) throws SQLException {
        return exists(session, "SELECT 1 FROM pg_replication_slots WHERE slot_name = ? AND wal_status = 'lost'",
                slotName());
    }

    private static boolean exists(Connection session, String sql, String name) throws SQLException {
        try (PreparedStatement ps = session.prepareStatement(sql)) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** Runs the engine until the app stops, the lock session breaks or the engine fails. */
    private void stream(Connection lockSession) throws Exception {
        producer = new KafkaProducer<>(producerConfig());
        // a new engine reads again from the stored offset: what an earlier one left pending is read again too
        PendingPublishes<RecordChangeEvent<SourceRecord>> pending = new PendingPublishes<>(MAX_PENDING, 60_000);
        CountDownLatch engineDone = new CountDownLatch(1);
        AtomicReference<Throwable> engineError = new AtomicReference<>();
        engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                .using(engineConfig())
                .notifying((records, committer) -> publishBatch(records, committer, pending))
                .using((success, message, error) -> {
                    if (!success) {
                        engineError.set(error != null ? error : new IllegalStateException(message));
                    }
                    engineDone.countDown();
                })
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "cdc-engine-" + serviceName));
        try {
            executor.execute(engine);
            role.set(RelayRole.STREAMING);
            lastError.set(null);
            LOG.infof("CDC relay streaming slot %s to Kafka", slotName());
            while (!stopping() && engineDone.getCount() > 0) {
                if (engineDone.await(1, TimeUnit.SECONDS)) {
                    break;
                }
                if (!lockSession.isValid(2)) {
                    throw new IllegalStateException("relay lock session lost; stopping the engine so another instance can stream");
                }
            }
        } finally {
            try {
                if (stopping() && engineDone.getCount() > 0) {
                    settleBeforeClose(pending);
                }
                closeEngine(engineDone);
            } finally {
                engineDone.await(30, TimeUnit.SECONDS);
                executor.shutdownNow();
                engine = null;
            }
        }
        if (!stopping()) {
            Throwable error = engineError.get();
            throw new IllegalStateException("Debezium engine stopped", error);
        }
    }

    /**
     * Debezium's engine refuses {@code close()} while its tasks are still starting (closing then would leak them), and
     * once it stopped on its own (Kafka away past the delivery timeout, PostgreSQL restarted): the first passes, and
     * the second needs no close. Either refusal thrown from here would hide why the engine stopped and skip the
     * executor's shutdown.
     */
    private void closeEngine(CountDownLatch engineDone) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (engineDone.getCount() > 0) {
            try {
                engine.close();
                return;
            } catch (IllegalStateException notNow) {
                if (System.nanoTime() - deadline > 0) {
                    LOG.warnf("CDC relay of %s: the engine did not close within 30 s (%s)", serviceName, notNow.getMessage());
                    return;
                }
                engineDone.await(100, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * A graceful stop: waits for Kafka's acknowledgement of everything handed to it (bounded by the producer's
     * delivery timeout) and marks it processed, so that the offset the engine stores as it closes covers every
     * event published. Without this the last events before a stop would stay unmarked until the next handover (a
     * heartbeat, up to a second later) and be published again after the restart.
     */
    private void settleBeforeClose(PendingPublishes<RecordChangeEvent<SourceRecord>> pending) {
        // the monitor keeps the engine's thread out of publishBatch meanwhile: the committer is not thread-safe
        synchronized (pending) {
            try {
                producer.flush();
                LOG.infof("CDC relay of %s stopping: marked %d acknowledged record(s) processed", serviceName,
                        pending.close());
            } catch (RuntimeException e) {
                LOG.warnf("CDC relay of %s stops with records unmarked (%s); they are published again after the restart",
                        serviceName, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Hands a batch to Kafka and marks processed what Kafka has acknowledged so far (see {@link PendingPublishes});
     * offsets are stored as the engine's commit policy says, only ever for marked records. After a graceful stop
     * began ({@link #settleBeforeClose}) nothing more is published or marked: those records are read again after
     * the restart.
     */
    private void publishBatch(List<RecordChangeEvent<SourceRecord>> records,
                              DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer,
                              PendingPublishes<RecordChangeEvent<SourceRecord>> pending) throws InterruptedException {
        synchronized (pending) {
            if (!pending.closed()) {
                publish(records, committer, pending);
            }
        }
    }

    private void publish(List<RecordChangeEvent<SourceRecord>> records,
                         DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer,
                         PendingPublishes<RecordChangeEvent<SourceRecord>> pending) throws InterruptedException {
        for (RecordChangeEvent<SourceRecord> change : records) {
            SourceRecord source = change.record();
            if (source.topic() == null || source.topic().startsWith(HEARTBEAT_TOPIC_PREFIX) || source.value() == null) {
                pending.add(change, List.of());
                continue;
            }
            if (holdBeforePublish) {
                LOG.warnf("FAULT INJECTION: holding %d record(s) before publishing them", records.size());
                while (!stopping()) {
                    pause(Duration.ofSeconds(1));
                }
                throw new InterruptedException("stopped while holding records");
            }
            ProducerRecord<String, String> record = toKafka(source);
            Long committedAt = committedAt(source);
            List<Future<RecordMetadata>> sends = new ArrayList<>(2);
            sends.add(send(record, committedAt));
            if (publishTwice) {
                sends.add(send(record, null));
            }
            pending.add(change, sends);
        }
        if (pending.settle(committer) > 0) {
            committer.markBatchFinished();
        }
    }

    /**
     * When the row's transaction committed, in epoch milliseconds: the source offset's {@code ts_usec}, which
     * Debezium takes from the transaction's commit record. Not the record's timestamp: after the outbox router that
     * is when the engine read the row, which leaves out the very wait (the walsender's, the slot's reader's) that the
     * relay's latency is about, and a restart's whole gap.
     */
    private static Long committedAt(SourceRecord source) {
        Object micros = source.sourceOffset() == null ? null : source.sourceOffset().get("ts_usec");
        return micros instanceof Number n ? n.longValue() / 1000 : source.timestamp();
    }

    private Future<RecordMetadata> send(ProducerRecord<String, String> record, Long committedAt) {
        KafkaProducer<String, String> sender = producer;
        return sender.send(record, (metadata, error) -> {
            if (error == null) {
                published.increment();
                if (committedAt != null) {
                    publishLatency.record(Math.max(0, System.currentTimeMillis() - committedAt), TimeUnit.MILLISECONDS);
                }
            } else {
                dropTheRestAfter(sender, error);
            }
        });
    }

    /**
     * A send failed (its delivery timeout ran out while Kafka was away): every later record of its partition must fail
     * too. The producer would send them, the failed one's sequence given to the next, and a later event of an order
     * would be on the topic before an earlier one that the restarted engine publishes again. Closed without waiting,
     * from its own callback, the producer fails what it has not sent yet; the engine reads all of it again, in order.
     */
    private void dropTheRestAfter(KafkaProducer<String, String> sender, Exception error) {
        // the records it drops fail in turn, each with its own callback
        if (dropped.getAndSet(sender) != sender) {
            LOG.warnf("CDC relay of %s: Kafka did not take an event (%s); dropping the producer's unsent records, "
                    + "which the restarted engine publishes again, in order", serviceName, error.toString());
            sender.close(Duration.ZERO);
        }
    }

    private static ProducerRecord<String, String> toKafka(SourceRecord source) {
        RecordHeaders headers = new RecordHeaders();
        for (Header header : source.headers()) {
            String name = header.key();
            if (name.startsWith("__debezium") || header.value() == null) {
                continue;
            }
            headers.add("id".equals(name) ? EventHeaders.EVENT_ID : name,
                    header.value().toString().getBytes(StandardCharsets.UTF_8));
        }
        return new ProducerRecord<>(source.topic(), null, String.valueOf(source.key()), String.valueOf(source.value()), headers);
    }

    private Properties producerConfig() {
        Properties p = KafkaClients.producerConfig(kafkaBroker, serviceName + "-cdc-relay");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "1");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(deliveryTimeout.toMillis()));
        // the producer refuses a delivery timeout shorter than a request's
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Long.toString(Math.min(10_000, deliveryTimeout.toMillis() / 2)));
        return p;
    }

    private Properties engineConfig() {
        Properties p = new Properties();
        p.setProperty("name", serviceName + "-outbox-relay");
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("database.hostname", target.host());
        p.setProperty("database.port", Integer.toString(target.port()));
        p.setProperty("database.user", target.user());
        p.setProperty("database.password", target.password());
        p.setProperty("database.dbname", target.database());
        p.setProperty("topic.prefix", serviceName);
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", slotName());
        p.setProperty("publication.name", publicationName());
        p.setProperty("publication.autocreate.mode", "disabled");
        p.setProperty("table.include.list", "public.outbox");
        // pgoutput hands over every logical decoding message written in the database (pg_logical_emit_message: an
        // extension's, a tool's) and Debezium would publish it to a topic of its own that does not exist, holding up
        // every outbox event behind it; the relay publishes the outbox only
        p.setProperty("message.prefix.exclude.list", ".*");
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("tombstones.on.delete", "false");
        // Debezium's default of 500 ms would be the floor of the commit-to-publish latency
        p.setProperty("poll.interval.ms", Long.toString(pollInterval.toMillis()));
        p.setProperty("max.batch.size", Integer.toString(maxBatchSize));
        p.putAll(target.driverProperties());
        if (!slotListen.isZero()) {
            p.setProperty("driver.socketFactory", ListeningSlotSocketFactory.class.getName());
            p.setProperty("driver.socketFactoryArg", Long.toString(Math.max(1, slotListen.toMillis())));
        }
        // every error ends the engine and comes back to the supervisor, which prepares publication and slot again:
        // Debezium's own retries (unlimited by default) restart the task inside the engine, past prepareSlot, so a slot
        // PostgreSQL invalidated while it streamed was waited for half an hour (900 looks for its position), and a
        // dropped publication or a revoked login looped for ever, the relay STREAMING and every event meanwhile lost
        p.setProperty("errors.max.retries", "0");
        // a taken-over slot may still look active for a moment after its old reader died
        p.setProperty("slot.max.retries", "10");
        p.setProperty("slot.retry.delay.ms", "1000");
        p.setProperty("heartbeat.interval.ms", Long.toString(heartbeatInterval.toMillis()));
        p.setProperty("heartbeat.action.query", HEARTBEAT_MESSAGE);
        p.setProperty("offset.flush.interval.ms", Long.toString(offsetFlushInterval.toMillis()));
        p.setProperty("offset.storage", "io.debezium.storage.jdbc.offset.JdbcOffsetBackingStore");
        p.setProperty("offset.storage.jdbc.connection.url", target.jdbcUrl());
        p.setProperty("offset.storage.jdbc.connection.user", target.user());
        p.setProperty("offset.storage.jdbc.connection.password", target.password());
        p.setProperty("offset.storage.jdbc.table.name", "cdc_offset");
        p.setProperty("transforms", "outbox");
        p.setProperty("transforms.outbox.type", "io.debezium.transforms.outbox.EventRouter");
        p.setProperty("transforms.outbox.route.by.field", "aggregate_type");
        p.setProperty("transforms.outbox.route.topic.replacement", "${routedByValue}");
        p.setProperty("transforms.outbox.table.field.event.id", "id");
        p.setProperty("transforms.outbox.table.field.event.key", "aggregate_id");
        p.setProperty("transforms.outbox.table.field.event.payload", "payload");
        p.setProperty("transforms.outbox.table.fields.additional.placement",
                "type:header:" + EventHeaders.EVENT_TYPE
                        + ",correlation_id:header:" + EventHeaders.CORRELATION_ID
                        + ",causation_id:header:" + EventHeaders.CAUSATION_ID);
        return p;
    }

    private void closeProducer() {
        KafkaProducer<String, String> p = producer;
        producer = null;
        if (p != null) {
            p.close(Duration.ofSeconds(10));
        }
    }
}
