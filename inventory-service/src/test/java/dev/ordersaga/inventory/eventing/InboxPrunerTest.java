package dev.ordersaga.inventory.eventing;

import dev.ordersaga.eventing.InboxPruner;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

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
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The inbox forgets old event ids, also when two replicas prune at the same moment. */
@QuarkusTest
@WithTestResource(StackTestResource.class)
class InboxPrunerTest {

    @Inject
    InboxPruner pruner;

    @Inject
    DataSource dataSource;

    @Test
    void entriesOlderThanTheRetentionAreRemovedAndRecentOnesKept() throws Exception {
        String marker = "prune-" + UUID.randomUUID();
        Instant now = Instant.now();
        insert(marker, 30, now.minus(Duration.ofDays(10)));
        insert(marker, 5, now.minus(Duration.ofHours(1)));

        pruner.prune(now.minus(Duration.ofDays(8)));

        assertThat(count(marker)).isEqualTo(5);
    }

    /**
     * Rows another replica's batch holds are passed over, not waited for: with a transaction holding some of them
     * until the prune returns, a prune that waited would never return.
     */
    @Test
    void rowsAnotherReplicaHoldsAreSkippedNotWaitedFor() throws Exception {
        String marker = "prune-held-" + UUID.randomUUID();
        Instant now = Instant.now();
        insert(marker, 20, now.minus(Duration.ofDays(30)));
        try (Connection holder = dataSource.getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement hold = holder.prepareStatement(
                    "SELECT event_id FROM inbox WHERE correlation_id = ? LIMIT 5 FOR UPDATE")) {
                hold.setString(1, marker);
                hold.executeQuery().close();
            }
            ExecutorService replica = Executors.newSingleThreadExecutor();
            try {
                replica.submit(() -> pruner.prune(now.minus(Duration.ofDays(8)))).get(30, TimeUnit.SECONDS);
            } finally {
                replica.shutdownNow();
                holder.rollback();
            }
        }
        assertThat(count(marker)).as("the held rows, and only they").isEqualTo(5);
    }

    @Test
    void replicasPruningAtOnceBothSucceed() throws Exception {
        String marker = "prune-race-" + UUID.randomUUID();
        Instant now = Instant.now();
        insert(marker, 12_000, now.minus(Duration.ofDays(30)));
        insert(marker, 3, now);
        Instant cutoff = now.minus(Duration.ofDays(8));

        ExecutorService replicas = Executors.newFixedThreadPool(2);
        try {
            List<Future<Long>> runs = new ArrayList<>();
            Callable<Long> prune = () -> pruner.prune(cutoff);
            runs.add(replicas.submit(prune));
            runs.add(replicas.submit(prune));
            for (Future<Long> run : runs) {
                run.get();
            }
        } finally {
            replicas.shutdown();
        }
        assertThat(count(marker)).isEqualTo(3);
    }

    private void insert(String correlationId, int rows, Instant receivedAt) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "INSERT INTO inbox (event_id, event_type, topic, order_id, correlation_id, received_at) VALUES (?, 'OrderCreated', 'order.events', ?, ?, ?)")) {
            for (int i = 0; i < rows; i++) {
                ps.setObject(1, UUID.randomUUID());
                ps.setObject(2, UUID.randomUUID());
                ps.setString(3, correlationId);
                ps.setTimestamp(4, Timestamp.from(receivedAt));
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private long count(String correlationId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM inbox WHERE correlation_id = ?")) {
            ps.setString(1, correlationId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
