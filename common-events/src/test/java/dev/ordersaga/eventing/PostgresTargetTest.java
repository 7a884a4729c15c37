package dev.ordersaga.eventing;

import io.debezium.config.Configuration;
import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.debezium.jdbc.JdbcConfiguration;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

class PostgresTargetTest {

    @Test
    void theUrlsParametersHoldForEveryConnectionOfTheRelay() {
        PostgresTarget target = PostgresTarget.fromJdbcUrl(
                "jdbc:postgresql://db.example:6432/order_db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca%20root.crt&ssl",
                "order_svc", "secret");

        assertThat(target.host()).isEqualTo("db.example");
        assertThat(target.port()).isEqualTo(6432);
        assertThat(target.database()).isEqualTo("order_db");
        assertThat(target.jdbcUrl()).as("the relay's own sessions and the offset store")
                .isEqualTo("jdbc:postgresql://db.example:6432/order_db?sslmode=verify-full"
                        + "&sslrootcert=%2Fetc%2Fca%20root.crt&ssl");
        assertThat(target.driverProperties()).as("Debezium's connections, the replication one among them")
                .containsExactly(entry("driver.sslmode", "verify-full"), entry("driver.sslrootcert", "/etc/ca root.crt"),
                        entry("driver.ssl", ""));
    }

    /**
     * Debezium has an sslmode of its own ({@code database.sslmode}, "prefer" by default): its connections must take the
     * URL's, or the replication connection would talk to whatever server answers while the pool verifies it.
     */
    @Test
    void debeziumsConnectionsTakeTheUrlsParametersOverItsOwnDefaults() {
        PostgresTarget target = PostgresTarget.fromJdbcUrl(
                "jdbc:postgresql://db.example:5432/order_db?sslmode=verify-full&sslrootcert=%2Fetc%2Fdb-ca%2Fca.crt",
                "order_svc", "secret");
        Map<String, String> config = new HashMap<>(target.driverProperties());
        config.put("database.hostname", target.host());
        config.put("database.dbname", target.database());
        config.put("topic.prefix", "order-service");

        JdbcConfiguration jdbc = new PostgresConnectorConfig(Configuration.from(config)).getJdbcConfig();

        assertThat(jdbc.getString("sslmode")).isEqualTo("verify-full");
        assertThat(jdbc.getString("sslrootcert")).isEqualTo("/etc/db-ca/ca.crt");
    }

    @Test
    void aUrlWithoutParametersOrPortIsTheDatabaseAlone() {
        PostgresTarget target = PostgresTarget.fromJdbcUrl("jdbc:postgresql://127.0.0.1/order_db", "u", "p");

        assertThat(target.port()).isEqualTo(5432);
        assertThat(target.jdbcUrl()).isEqualTo("jdbc:postgresql://127.0.0.1:5432/order_db");
        assertThat(target.driverProperties()).isEmpty();
    }

    @Test
    void aListOfHostsIsRefused() {
        assertThatThrownBy(() -> PostgresTarget.fromJdbcUrl("jdbc:postgresql://a:5432,b:5432/order_db", "u", "p"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("one host");
    }
}
