package dev.ordersaga.systemtest;

import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.TestStack;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;

/**
 * Each system test class starts from a clean slate: the services' tables empty, their replication slots at the end of
 * the WAL, and their consumer groups at the end of the event topics. The stack is shared with the in-process module
 * tests and with earlier test classes, which leave events for made-up orders on the topics and in the slots, and
 * work rows in the tables (payments to refund, for instance, against a provider sandbox that is gone). The services
 * a test starts would act on all of that: refunds retried with alerts for ever, made-up orders in the logs and in the
 * audit, consumers busy with other tests' events while this one waits.
 *
 * <p>Applied to every {@code *IT} class, before its own {@code @BeforeAll}, by JUnit's extension auto-detection
 * ({@code junit-platform.properties}), so that no system test can forget it. It needs the previous class's services
 * gone. One killed with SIGKILL leaves its slot in use until PostgreSQL notices, and its consumer group with a member
 * until its session timeout (10 s, common-events' default) ends it: so each step is tried again for up to {@link #GONE_WITHIN}.
 */
public final class CleanSlate implements BeforeAllCallback {

    private static final List<String> SERVICES = List.of("order", "inventory", "payment", "shipping");
    /** Kept: Flyway's own record of the migrations that made the tables. */
    private static final String MIGRATIONS = "flyway_schema_history";
    private static final long KAFKA_TIMEOUT_SECONDS = 30;
    private static final Duration GONE_WITHIN = Duration.ofSeconds(90);

    @Override
    public void beforeAll(ExtensionContext context) {
        if (context.getRequiredTestClass().getSimpleName().endsWith("IT")) {
            clear();
        }
    }

    static void clear() {
        for (String service : SERVICES) {
            await("clean slate: " + service + "_db emptied and its slot moved (is a " + service
                    + "-service of an earlier test still running?)")
                    .atMost(GONE_WITHIN).pollInterval(Duration.ofSeconds(1)).ignoreExceptions()
                    .until(() -> {
                        clearDatabase(service);
                        return true;
                    });
        }
        await("clean slate: the consumer groups moved to the end of the topics (is a service of an earlier test still "
                + "running?)")
                .atMost(GONE_WITHIN).pollInterval(Duration.ofSeconds(1)).ignoreExceptions()
                .until(() -> {
                    moveGroupsToTheEnd();
                    return true;
                });
    }

    /**
     * Empties every table, the stored CDC offsets with them, then moves the service's slot past everything written so
     * far: its relay, started without an offset, streams from the slot's position on.
     */
    private static void clearDatabase(String service) throws SQLException {
        try (Connection c = TestStack.connect(service + "_db"); Statement st = c.createStatement()) {
            // a service still connected holds its tables' locks: fail, not hang
            st.execute("SET lock_timeout = '10s'");
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = st.executeQuery(
                    "SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '"
                            + MIGRATIONS + "'")) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
            if (!tables.isEmpty()) {
                st.execute("TRUNCATE " + String.join(", ", tables));
            }
            // A slot PostgreSQL invalidated (a RelaySlotLostIT cut short) cannot be moved: it is dropped, and the relay
            // makes a new one, at the end of the WAL, when it starts.
            try (PreparedStatement advance = c.prepareStatement("""
                    SELECT CASE WHEN wal_status = 'lost' THEN pg_drop_replication_slot(slot_name)::text
                                ELSE pg_replication_slot_advance(slot_name, pg_current_wal_lsn())::text END
                    FROM pg_replication_slots WHERE slot_name = ? AND database = current_database()""")) {
                advance.setString(1, service + "_outbox");
                advance.execute();
            }
        }
    }

    /** Every service's consumer group, on every event and replay topic, at the topic's end. */
    private static void moveGroupsToTheEnd() throws InterruptedException, ExecutionException, TimeoutException {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestStack.kafkaBootstrap()))) {
            List<String> consumed = new ArrayList<>(Topics.EVENT_TOPICS);
            consumed.addAll(Topics.REPLAY_TOPICS);
            Map<String, TopicDescription> topics = admin.describeTopics(consumed).allTopicNames()
                    .get(KAFKA_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            topics.values().forEach(topic -> topic.partitions().forEach(
                    p -> latest.put(new TopicPartition(topic.name(), p.partition()), OffsetSpec.latest())));
            Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(latest).all()
                    .get(KAFKA_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> atTheEnd = ends.entrySet().stream()
                    .collect(Collectors.toMap(Map.Entry::getKey, e -> new OffsetAndMetadata(e.getValue().offset())));
            for (String service : SERVICES) {
                admin.alterConsumerGroupOffsets(service + "-service", atTheEnd).all()
                        .get(KAFKA_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
        }
    }
}
