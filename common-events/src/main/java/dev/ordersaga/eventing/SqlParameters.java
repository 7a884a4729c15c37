package dev.ordersaga.eventing;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.UUID;

/**
 * Parameters of the plain SQL writes ({@link TransactionalWrites}) that may be null: bound as a NULL of their column's
 * type; and the columns of the plain SQL reads that may be null.
 */
public final class SqlParameters {

    private SqlParameters() {
    }

    public static void setString(PreparedStatement statement, int index, String value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.VARCHAR);
        } else {
            statement.setString(index, value);
        }
    }

    public static void setInstant(PreparedStatement statement, int index, Instant value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.TIMESTAMP_WITH_TIMEZONE);
        } else {
            statement.setTimestamp(index, Timestamp.from(value));
        }
    }

    public static void setUuid(PreparedStatement statement, int index, UUID value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.OTHER);
        } else {
            statement.setObject(index, value);
        }
    }

    /** A timestamp column that may be null. */
    public static Instant getInstant(ResultSet row, int index) throws SQLException {
        Timestamp value = row.getTimestamp(index);
        return value == null ? null : value.toInstant();
    }
}
