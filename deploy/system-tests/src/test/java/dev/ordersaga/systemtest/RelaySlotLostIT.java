package dev.ordersaga.systemtest;

import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.OrderCancelled;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.KafkaTopicProbe;
import dev.ordersaga.testing.TestStack;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * PostgreSQL invalidates a replication slot whose reader stays away until the WAL it still needs outgrows
 * {@code max_slot_wal_keep_size}. Such a slot can never stream again: the relay replaces it and raises the alarm, and
 * the service's events flow again; what the removed WAL held is lost, as the alarm says. So for a slot that is gone,
 * and one moved past the relay's stored position. Besides: the slot exists before the service takes a write, a start
 * that cannot make it fails at its deadline, and a logical decoding message in the WAL holds nothing up.
 */
class RelaySlotLostIT {

    private static final String SLOT = "order_outbox";

    @Test
    void anInvalidatedSlotIsReplacedAndTheOutboxStreamsAgain() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS)) {
            streamAnOrder(orderEvents, "slot-lost-order-1");
            // committed while no relay reads the slot, and then removed with the WAL that held it
            UUID lost = commitWhileNoRelayReads("slot-lost-");
            invalidate(SLOT);

            streamsOnWithTheAlarm(orderEvents, "slot-lost-order-2", "is invalidated");
            assertThat(walStatus(SLOT)).isIn("reserved", "extended");
            neverPublished(orderEvents, lost, "the removed WAL's event");
        }
    }

    /**
     * A slot can also vanish outright: a failover to a standby, which keeps no logical slots before PostgreSQL 17, a
     * restore, an operator's drop. The relay's stored offsets say it streamed from one, so the new slot comes with the
     * same alarm: what was committed meanwhile is not decoded again.
     */
    @Test
    void aSlotThatIsGoneIsCreatedAnewWithTheAlarmAndTheOutboxStreamsAgain() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS)) {
            streamAnOrder(orderEvents, "slot-gone-order-1");
            try (Connection c = TestStack.connect("order_db");
                 PreparedStatement drop = c.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
                drop.setString(1, SLOT);
                drop.execute();
            }
            UUID lost = commitWhileNoRelayReads("slot-gone-");

            streamsOnWithTheAlarm(orderEvents, "slot-gone-order-2", "is gone");
            neverPublished(orderEvents, lost, "the event committed while the slot was gone");
        }
    }

    /**
     * The slot can also be lost while the relay streams from it: PostgreSQL invalidates a slot whose reader lags past
     * {@code max_slot_wal_keep_size} (a Kafka outage, a long transaction holding it back, here a reader that stopped
     * answering) and ends its walsender. The engine's error comes back to the relay, which replaces the slot with the
     * alarm. Left to Debezium's own retries, the task restarted inside the engine, past the relay's check of the slot,
     * and looked for the slot's position for half an hour, the relay saying STREAMING and every event meanwhile lost.
     */
    @Test
    void aSlotInvalidatedWhileTheRelayStreamsIsReplacedWithTheAlarm() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             ServiceProcess order = ServiceProcess.start("order-service", "slot-lost-streaming-order", 18181, Map.of())
                     .awaitReady()) {
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));

            // the service frozen, its walsender stays and its slot stops moving; PostgreSQL ends that walsender as it
            // invalidates the slot
            signal(order, "STOP");
            try {
                assertThat(activeReader(SLOT)).as("the frozen relay's walsender").isTrue();
                invalidate(SLOT);
            } finally {
                signal(order, "CONT");
            }

            await("the relay's alarm").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                    .until(() -> order.logContains("ALERT CDC relay of order: replication slot " + SLOT
                            + " is invalidated"));
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            assertThat(walStatus(SLOT)).isIn("reserved", "extended");
            orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));
        }
    }

    private static void signal(ServiceProcess service, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(service.pid())).inheritIO().start();
        assertThat(kill.waitFor()).as("kill -%s", signal).isZero();
    }

    private static boolean activeReader(String slot) throws SQLException {
        return Databases.count("order_db", "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active",
                slot) == 1;
    }

    /**
     * An operator moved the slot on past what the relay had stored (pg_replication_slot_advance, say, to be rid of a
     * backlog). Debezium refuses to resume from an offset its slot has passed, and the relay failed on it for ever; it
     * now forgets the offset with the same alarm and streams on from the slot's position.
     */
    @Test
    void aSlotMovedPastTheStoredOffsetIsStreamedOnFromWithTheAlarm() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS)) {
            streamAnOrder(orderEvents, "slot-moved-order-1");
            UUID skipped = commitWhileNoRelayReads("slot-moved-");
            movePastTheStoredOffset(SLOT);

            streamsOnWithTheAlarm(orderEvents, "slot-moved-order-2", "is past the position the relay stored");
            neverPublished(orderEvents, skipped, "the event the slot was moved past");
        }
    }

    /**
     * After a fail-over to a standby that was behind, a relay still stopping can store a position of the old server's
     * log over the offsets the next relay forgot when it made the slot anew: past the end of this server's log, from
     * where Debezium would pass over every event until the log reached it. The relay forgets such an offset and
     * streams on from its slot, the event committed while no relay read among the first.
     */
    @Test
    void anOffsetPastTheEndOfTheLogIsForgottenAndNothingIsPassedOver() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS)) {
            streamAnOrder(orderEvents, "offset-ahead-order-1");
            UUID whileDown = commitWhileNoRelayReads("offset-ahead-");
            try (Connection c = TestStack.connect("order_db"); Statement st = c.createStatement()) {
                assertThat(st.executeUpdate("""
                        UPDATE cdc_offset SET offset_val = (offset_val::jsonb || jsonb_build_object(
                            'lsn_proc', p.lsn, 'lsn_commit', p.lsn, 'lsn', p.lsn))::text
                        FROM (SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint + 1073741824 AS lsn) p""")).isOne();
            }

            try (ServiceProcess order = ServiceProcess.start("order-service", "offset-ahead-order-2", 18181, Map.of())
                    .awaitReady()) {
                order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
                orderEvents.awaitKey(whileDown.toString(), Duration.ofSeconds(30));
                orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));
                assertThat(order.logContains("is past the end of this server's log")).isTrue();
            }
        }
    }

    /** A life of the service that streams one order: its relay leaves an offset stored, its slot behind the order. */
    private static void streamAnOrder(KafkaTopicProbe orderEvents, String instance) throws Exception {
        try (ServiceProcess order = ServiceProcess.start("order-service", instance, 18181, Map.of()).awaitReady()) {
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));
        }
    }

    /** An outbox row of a made-up order, committed while the service is down; the order's id. */
    private static UUID commitWhileNoRelayReads(String correlationPrefix) throws SQLException {
        UUID orderId = UUID.randomUUID();
        OutboxRows.commit("order_db", EventEnvelope.of(orderId, correlationPrefix + orderId, null,
                new OrderCancelled("not published")));
        return orderId;
    }

    /** The next life of the service streams its orders again, and has raised the slot's alarm once. */
    private static void streamsOnWithTheAlarm(KafkaTopicProbe orderEvents, String instance, String alarm)
            throws Exception {
        Instant started = Instant.now();
        try (ServiceProcess order = ServiceProcess.start("order-service", instance, 18181, Map.of()).awaitReady()) {
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));
            assertThat(order.logContains("ALERT CDC relay of order: replication slot " + SLOT + " " + alarm)).isTrue();
            String metrics = given().baseUri(order.managementUrl()).get("/q/metrics").then().statusCode(200)
                    .extract().asString();
            assertThat(metrics).containsPattern("(?m)^saga_relay_slot_lost_total(\\{[^}]*})? 1\\.0$");
            // found as the service started, before its first scrape: the alert rule reads when, not how often
            Matcher lostAt = Pattern.compile("(?m)^saga_relay_slot_lost_at_seconds(?:\\{[^}]*})? (\\S+)$")
                    .matcher(metrics);
            assertThat(lostAt.find()).as("saga_relay_slot_lost_at_seconds").isTrue();
            assertThat(Instant.ofEpochSecond((long) Double.parseDouble(lostAt.group(1))))
                    .isBetween(started.minusSeconds(1), Instant.now());
        }
    }

    /**
     * The event stays off its topic: the orders after it are there, and the relay that streamed them has stopped, so
     * nothing can follow once the probe has read all the topic holds.
     */
    private static void neverPublished(KafkaTopicProbe orderEvents, UUID orderId, String what) {
        orderEvents.awaitCaughtUp(Duration.ofSeconds(30));
        assertThat(orderEvents.matching(r -> orderId.toString().equals(r.key()))).as(what).isEmpty();
    }

    /**
     * A logical decoding message in the service's database (pg_logical_emit_message: an extension's, a tool's) is not
     * an outbox row. Debezium published such messages to a topic of their own, which does not exist, and every outbox
     * event behind one waited for ever; the relay passes them over.
     */
    @Test
    void aLogicalDecodingMessageInTheWalDoesNotHoldTheOutboxUp() throws Exception {
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             ServiceProcess order = ServiceProcess.start("order-service", "slot-message-order", 18181, Map.of())
                     .awaitReady()) {
            order.awaitRelayRole("STREAMING", Duration.ofSeconds(60));
            try (Connection c = TestStack.connect("order_db"); Statement st = c.createStatement()) {
                st.execute("SELECT pg_logical_emit_message(true, 'relay-it', 'transactional')");
                st.execute("SELECT pg_logical_emit_message(false, 'relay-it', 'not transactional')");
            }
            orderEvents.awaitKey(OrderApi.placeOrder(order).toString(), Duration.ofSeconds(30));
        }
    }

    /**
     * A new database has no slot, and a row committed before its slot exists is never decoded. The service prepares the
     * slot before it takes a write: while the slot's creation waits (for an open transaction here: it waits for every
     * transaction that was running when it began), the service does not even listen; then its first order is streamed.
     * Before, the relay's thread created the slot while HTTP and the consumers already took writes.
     */
    @Test
    void onAFreshDatabaseTheSlotExistsBeforeTheServiceTakesAWrite() throws Exception {
        try (Connection c = TestStack.connect("order_db"); Statement st = c.createStatement()) {
            st.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'");
            st.execute("DROP PUBLICATION IF EXISTS " + SLOT);
            st.executeUpdate("DELETE FROM cdc_offset");
        }
        try (KafkaTopicProbe orderEvents = KafkaTopicProbe.fromNow(Topics.ORDER_EVENTS);
             Connection blocker = TestStack.connect("order_db")) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("SELECT txid_current()");
            }
            try (ServiceProcess order = ServiceProcess.start("order-service", "slot-fresh-order", 18181, Map.of())) {
                await("the slot's creation waiting for the open transaction").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(200)).until(RelaySlotLostIT::slotCreationWaits);
                // the log's order below says the same for the whole start: the slot, then HTTP
                assertThat(order.listening()).as("HTTP while the slot is not there").isFalse();
                blocker.commit();

                order.awaitReady().awaitRelayRole("STREAMING", Duration.ofSeconds(60));
                UUID first = OrderApi.placeOrder(order);
                orderEvents.awaitKey(first.toString(), Duration.ofSeconds(30));
                assertThat(order.logLineOf("Created replication slot " + SLOT)).as("the slot, then HTTP")
                        .isNotNegative().isLessThan(order.logLineOf("Listening on"));
                assertThat(order.logContains("ALERT")).as("a slot that never existed is no alarm").isFalse();
            }
        }
    }

    /**
     * A start that cannot prepare its slot (here the slot's creation waits for a transaction left open; alike, slots
     * used up or a role without REPLICATION) fails at {@code eventing.relay.prepare-deadline}, within Kubernetes'
     * startup probe, instead of taking writes that would never be published; it never listens, and leaves no session
     * waiting on the server.
     */
    @Test
    void aStartThatCannotPrepareItsSlotFailsAtTheDeadlineWithoutTakingAWrite() throws Exception {
        try (Connection c = TestStack.connect("order_db"); Statement st = c.createStatement()) {
            st.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    + "WHERE slot_name = '" + SLOT + "'");
            st.executeUpdate("DELETE FROM cdc_offset");
        }
        try (Connection blocker = TestStack.connect("order_db")) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("SELECT txid_current()");
            }
            try (ServiceProcess order = ServiceProcess.start("order-service", "slot-deadline-order", 18181,
                    Map.of("eventing.relay.prepare-deadline", "PT8S"))) {
                await("the slot's creation waiting for the open transaction").atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(200)).until(RelaySlotLostIT::slotCreationWaits);

                assertThat(order.awaitExit(Duration.ofSeconds(90))).as("exit code").isNotZero();
                assertThat(order.logContains("publication and slot " + SLOT + " not prepared within PT8S")).isTrue();
                assertThat(order.logLineOf("Listening on")).as("never listened").isNegative();
            }
            assertThat(slotCreationWaits()).as("a session left waiting").isFalse();
            blocker.rollback();
        }
    }

    private static boolean slotCreationWaits() throws SQLException {
        return Databases.count("order_db", """
                SELECT count(*) FROM pg_stat_activity
                WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock'
                  AND query LIKE '%pg_create_logical_replication_slot%' AND query NOT LIKE '%pg_stat_activity%'""") > 0;
    }

    /**
     * Advances the slot to the end of the WAL until its restart point, which moves only to a snapshot of running
     * transactions (a checkpoint writes one), has passed the position the relay stored: where Debezium refuses to
     * resume.
     */
    private static void movePastTheStoredOffset(String slot) throws SQLException {
        try (Connection c = TestStack.connect("order_db"); Statement st = c.createStatement();
             PreparedStatement advance = c.prepareStatement(
                     "SELECT pg_replication_slot_advance(?, pg_current_wal_lsn())")) {
            advance.setString(1, slot);
            // the stopped relay's walsender may hold the slot for a moment; an active slot cannot be moved
            await("slot " + slot + " released").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                    .until(() -> Databases.count("order_db",
                            "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND NOT active", slot) == 1);
            await("slot " + slot + " past the stored offset").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(500)).until(() -> {
                        st.execute("CHECKPOINT");
                        // a committed transaction: WAL written and flushed, so the advance (to the write
                        // position) passes it
                        st.execute("SELECT txid_current()");
                        advance.execute();
                        return Databases.count("order_db", """
                                SELECT count(*) FROM pg_replication_slots s, cdc_offset o
                                WHERE s.slot_name = ?
                                  AND s.restart_lsn - '0/0'::pg_lsn > (o.offset_val::jsonb ->> 'lsn_proc')::numeric""",
                                slot) > 0;
                    });
        }
    }

    /**
     * Moves the WAL on by a segment and the other services' slots with it, as their relays would move them (their
     * services are not running): the test's fault is this slot's alone. A run killed while the setting is lowered
     * leaves it in postgresql.auto.conf, which deploy/stack/postgres.sh resets on its next start. Then lets PostgreSQL keep 1 MB of WAL for a slot, less than
     * a segment, and checkpoints until the checkpoint has invalidated the slot, which is a segment behind.
     */
    private static void invalidate(String slot) throws SQLException {
        try (Connection c = TestStack.connect("order_db"); Statement st = c.createStatement()) {
            await("the other slots a segment ahead of " + slot).atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500)).until(() -> {
                        st.execute("SELECT pg_logical_emit_message(false, 'relay-slot-lost-it', 'wal')");
                        st.execute("SELECT pg_switch_wal()");
                        // a logical slot's restart point moves only to a snapshot of running transactions in the WAL,
                        // which a checkpoint writes
                        st.execute("CHECKPOINT");
                        keepUp(slot);
                        return othersInTheCurrentSegment(slot) && !inTheCurrentSegment(slot);
                    });
            try {
                st.execute("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
                st.execute("SELECT pg_reload_conf()");
                await("slot " + slot + " invalidated").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                        .until(() -> {
                            st.execute("CHECKPOINT");
                            return "lost".equals(walStatus(slot));
                        });
            } finally {
                st.execute("ALTER SYSTEM RESET max_slot_wal_keep_size");
                st.execute("SELECT pg_reload_conf()");
            }
        }
    }

    private static boolean othersInTheCurrentSegment(String except) throws SQLException {
        return Databases.count("order_db", """
                SELECT count(*) FROM pg_replication_slots
                WHERE slot_name LIKE '%\\_outbox' AND slot_name <> ? AND wal_status <> 'lost'
                  AND pg_walfile_name(restart_lsn) <> pg_walfile_name(pg_current_wal_lsn())""", except) == 0;
    }

    private static boolean inTheCurrentSegment(String slot) throws SQLException {
        return Databases.count("order_db", """
                SELECT count(*) FROM pg_replication_slots
                WHERE slot_name = ? AND pg_walfile_name(restart_lsn) = pg_walfile_name(pg_current_wal_lsn())""", slot) > 0;
    }

    /**
     * Advances the other services' idle slots to the end of the WAL, each from its own database, and forgets their
     * stored offsets as their relays would have moved them: Debezium refuses to start from an offset its slot has
     * passed.
     */
    private static void keepUp(String except) throws SQLException {
        List<String[]> idle = new ArrayList<>();
        try (Connection c = TestStack.connect("order_db"); PreparedStatement ps = c.prepareStatement("""
                SELECT slot_name, database FROM pg_replication_slots
                WHERE slot_name LIKE '%\\_outbox' AND NOT active AND slot_name <> ? AND wal_status <> 'lost'""")) {
            ps.setString(1, except);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    idle.add(new String[] {rs.getString(1), rs.getString(2)});
                }
            }
        }
        for (String[] slot : idle) {
            try (Connection c = TestStack.connect(slot[1]);
                 PreparedStatement ps = c.prepareStatement("SELECT pg_replication_slot_advance(?, pg_current_wal_lsn())");
                 Statement forget = c.createStatement()) {
                ps.setString(1, slot[0]);
                ps.execute();
                forget.executeUpdate("DELETE FROM cdc_offset");
            }
        }
    }

    private static String walStatus(String slot) throws SQLException {
        try (Connection c = TestStack.connect("order_db");
             PreparedStatement ps = c.prepareStatement("SELECT wal_status FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
