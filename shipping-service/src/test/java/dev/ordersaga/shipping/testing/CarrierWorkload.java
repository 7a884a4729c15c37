package dev.ordersaga.shipping.testing;

import org.awaitility.Awaitility;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The carrier sandbox's outage and slow mode are global: a test that arms them first waits until the service has
 * no carrier work left from elsewhere (earlier tests, or events of other services' tests on the shared topics).
 */
public final class CarrierWorkload {

    private CarrierWorkload() {
    }

    public static void awaitIdle(DataSource dataSource) {
        Awaitility.await("no shipment waiting for the carrier").atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> pending(dataSource) == 0);
    }

    private static long pending(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT count(*) FROM shipment WHERE status IN ('REQUESTED', 'CANCELLING')")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
