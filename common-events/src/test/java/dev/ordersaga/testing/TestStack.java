package dev.ordersaga.testing;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * Where the tests find the real stack: the environment if it says so, else the addresses deploy/stack.sh uses.
 */
public final class TestStack {

    private TestStack() {
    }

    public static String kafkaBootstrap() {
        return env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092");
    }

    public static String postgresHost() {
        return env("PG_HOST", "127.0.0.1");
    }

    public static int postgresPort() {
        return Integer.parseInt(env("PG_PORT", "5432"));
    }

    /** A connection to a service's database as the PostgreSQL superuser, to read what the service wrote. */
    public static Connection connect(String database) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://" + postgresHost() + ":" + postgresPort() + "/" + database,
                env("PG_ADMIN_USER", "postgres"), env("PG_ADMIN_PASSWORD", "postgres"));
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
