package dev.ordersaga.order.testing;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Orders as written, read past the service: what a request left in the table whatever it answered. */
public final class OrderRows {

    private OrderRows() {
    }

    /** Orders placed under this correlation id: each request of a test gets one of its own. */
    public static long withCorrelation(DataSource dataSource, String correlationId) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement orders = c.prepareStatement("SELECT count(*) FROM orders WHERE correlation_id = ?")) {
            orders.setString(1, correlationId);
            try (ResultSet count = orders.executeQuery()) {
                count.next();
                return count.getLong(1);
            }
        }
    }
}
