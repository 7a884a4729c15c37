package dev.ordersaga.testing;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Reads a service's inbox straight from its table, so that a test asserts what the consumer committed rather than
 * what it logged. Every service has the same inbox table (common-events' schema).
 */
public final class Inboxes {

    private Inboxes() {
    }

    /** How many inbox rows hold the event: 1 once it was handled, and never more, however often it came. */
    public static long rows(DataSource dataSource, UUID eventId) {
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM inbox WHERE event_id = ?")) {
            ps.setObject(1, eventId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("could not read the inbox", e);
        }
    }

    /** Whether the event was handled (or skipped) and its claim committed. */
    public static boolean claimed(DataSource dataSource, UUID eventId) {
        return rows(dataSource, eventId) == 1;
    }
}
