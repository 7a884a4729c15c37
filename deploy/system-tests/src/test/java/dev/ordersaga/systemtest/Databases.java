package dev.ordersaga.systemtest;

import dev.ordersaga.testing.TestStack;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** Reads (and, where a test plays a service's transaction, writes) the services' own databases. */
final class Databases {

    private Databases() {
    }

    static long count(String database, String sql, Object... params) throws SQLException {
        try (Connection c = TestStack.connect(database); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    static void execute(String database, String sql, Object... params) throws SQLException {
        try (Connection c = TestStack.connect(database); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            ps.executeUpdate();
        }
    }
}
