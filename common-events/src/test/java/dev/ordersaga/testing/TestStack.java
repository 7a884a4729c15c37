package dev.ordersaga.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * Where the tests find the real stack, decided once per JVM:
 * <ol>
 *   <li>the environment, if it names one ({@code PG_HOST}, {@code PG_PORT}, {@code KAFKA_BOOTSTRAP_SERVERS});</li>
 *   <li>else the local stack of deploy/stack.sh, if it answers on 127.0.0.1:5432 and :9092;</li>
 *   <li>else, where a container engine exists, PostgreSQL and Kafka started by Testcontainers
 *       ({@link ContainerStack}; cannot run on machines without one, such as the project's CI).</li>
 * </ol>
 */
public final class TestStack {

    public record Endpoints(String postgresHost, int postgresPort, String kafkaBootstrap, String adminUser, String adminPassword) {
    }

    private static Endpoints endpoints;

    private TestStack() {
    }

    public static synchronized Endpoints endpoints() {
        if (endpoints == null) {
            endpoints = discover();
        }
        return endpoints;
    }

    public static String kafkaBootstrap() {
        return endpoints().kafkaBootstrap();
    }

    public static String postgresHost() {
        return endpoints().postgresHost();
    }

    public static int postgresPort() {
        return endpoints().postgresPort();
    }

    /** A connection to a service's database as the PostgreSQL superuser, to read what the service wrote. */
    public static Connection connect(String database) throws SQLException {
        Endpoints e = endpoints();
        return DriverManager.getConnection("jdbc:postgresql://" + e.postgresHost() + ":" + e.postgresPort() + "/" + database,
                e.adminUser(), e.adminPassword());
    }

    private static Endpoints discover() {
        String adminUser = env("PG_ADMIN_USER", "postgres");
        String adminPassword = env("PG_ADMIN_PASSWORD", "postgres");
        if (System.getenv("PG_HOST") != null || System.getenv("PG_PORT") != null
                || System.getenv("KAFKA_BOOTSTRAP_SERVERS") != null) {
            return new Endpoints(env("PG_HOST", "127.0.0.1"), Integer.parseInt(env("PG_PORT", "5432")),
                    env("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092"), adminUser, adminPassword);
        }
        if (answers("127.0.0.1", 5432) && answers("127.0.0.1", 9092)) {
            return new Endpoints("127.0.0.1", 5432, "127.0.0.1:9092", adminUser, adminPassword);
        }
        if (ContainerStack.engineAvailable()) {
            return ContainerStack.start();
        }
        throw new IllegalStateException("No PostgreSQL/Kafka for the tests: start the local stack (deploy/stack.sh up), "
                + "name one in PG_HOST/PG_PORT/KAFKA_BOOTSTRAP_SERVERS, or run where a container engine exists");
    }

    private static boolean answers(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
