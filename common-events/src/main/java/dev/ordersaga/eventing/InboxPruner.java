package dev.ordersaga.eventing;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;

/**
 * Forgets processed event ids once no redelivery can reach them any more: the retention must be longer than the
 * topics' retention. Replicas may prune at the same time: each batch skips rows another replica has locked, and
 * a delete of an already deleted row is a no-op, so they never block or fail each other.
 */
@ApplicationScoped
public class InboxPruner {

    private static final Logger LOG = Logger.getLogger(InboxPruner.class);

    private static final String PRUNE_BATCH = """
            DELETE FROM inbox WHERE event_id IN (
              SELECT event_id FROM inbox WHERE received_at < ? LIMIT ? FOR UPDATE SKIP LOCKED)""";

    @Inject
    DataSource dataSource;

    @ConfigProperty(name = "eventing.inbox.retention", defaultValue = "P8D")
    Duration retention;

    @ConfigProperty(name = "eventing.inbox.prune-batch-size", defaultValue = "5000")
    int batchSize;

    @Scheduled(every = "${eventing.inbox.prune-every:1h}", delayed = "${eventing.inbox.prune-delay:1m}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduledPrune() {
        prune(Instant.now().minus(retention));
    }

    /** @return the number of inbox entries removed */
    public long prune(Instant olderThan) {
        long total = 0;
        int deleted;
        do {
            deleted = QuarkusTransaction.requiringNew().call(() -> deleteBatch(olderThan));
            total += deleted;
        } while (deleted == batchSize);
        if (total > 0) {
            LOG.infof("Pruned %d inbox entries received before %s", total, olderThan);
        }
        return total;
    }

    private int deleteBatch(Instant olderThan) throws SQLException {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement delete = connection.prepareStatement(PRUNE_BATCH)) {
            delete.setTimestamp(1, Timestamp.from(olderThan));
            delete.setInt(2, batchSize);
            return delete.executeUpdate();
        }
    }
}
