package dev.ordersaga.systemtest;

import dev.ordersaga.testing.TestStack;
import org.junit.jupiter.api.Test;
import org.postgresql.PGProperty;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The stack's PostgreSQL (deploy/stack/postgres.sh; in Kubernetes the cluster's pg_hba) lets a service's role reach its
 * own database only, and stream no physical replication. A role with REPLICATION that could connect to another service's database could decode all of it
 * through a slot of its own (its payment tokens, its addresses), whatever the grants on its tables.
 */
class DatabaseIsolationTest {

    @Test
    void aServicesRoleConnectsToItsOwnDatabase() throws SQLException {
        try (Connection own = connect("inventory_db", new Properties())) {
            assertThat(own.isValid(5)).isTrue();
        }
    }

    @Test
    void aServicesRoleCannotConnectToAnotherServicesDatabase() {
        assertThatThrownBy(() -> connect("payment_db", new Properties()).close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("permission denied for database \"payment_db\"");
    }

    @Test
    void norCanItsReplicationConnectionDecodeOne() {
        assertThatThrownBy(() -> connect("payment_db", replication("database")).close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("permission denied for database \"payment_db\"");
    }

    /** Physical replication names no database: it would stream the whole cluster's WAL, every service's database. */
    @Test
    void norCanItStreamTheWholeClustersWal() {
        assertThatThrownBy(() -> connect("inventory_db", replication("true")).close())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("rejects replication connection");
    }

    /** A replication connection, as Debezium's (logical: "database") or pg_basebackup's (physical: "true"). */
    private static Properties replication(String kind) {
        Properties properties = new Properties();
        PGProperty.REPLICATION.set(properties, kind);
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(properties, "15");
        PGProperty.PREFER_QUERY_MODE.set(properties, "simple");
        return properties;
    }

    private static Connection connect(String database, Properties properties) throws SQLException {
        Properties credentials = new Properties();
        credentials.putAll(properties);
        credentials.setProperty("user", "inventory_svc");
        credentials.setProperty("password", "inventory_svc");
        return DriverManager.getConnection("jdbc:postgresql://" + TestStack.postgresHost() + ":" + TestStack.postgresPort()
                + "/" + database, credentials);
    }
}
