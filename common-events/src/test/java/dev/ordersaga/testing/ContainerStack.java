package dev.ordersaga.testing;

import dev.ordersaga.events.Topics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The stack in containers, for machines with a container engine and no local stack: the same PostgreSQL setup as
 * deploy/stack/postgres.sh (logical decoding, one database and replication role per service) and a KRaft Kafka
 * with the project's topics. Started once per JVM; Testcontainers removes the containers when the JVM exits.
 */
final class ContainerStack {

    private static final List<String> SERVICES = List.of("order", "inventory", "payment", "shipping");

    private ContainerStack() {
    }

    static boolean engineAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // lives as long as the JVM
    static TestStack.Endpoints start() {
        PostgreSQLContainer postgres = new PostgreSQLContainer("postgres:15")
                .withUsername("postgres").withPassword("postgres")
                .withCommand("postgres", "-c", "wal_level=logical", "-c", "max_replication_slots=20",
                        "-c", "max_wal_senders=20", "-c", "max_connections=300", "-c", "fsync=off");
        KafkaContainer kafka = new KafkaContainer("apache/kafka:4.1.2");
        postgres.start();
        kafka.start();
        try (Connection c = DriverManager.getConnection(postgres.getJdbcUrl(), "postgres", "postgres");
             Statement st = c.createStatement()) {
            for (String service : SERVICES) {
                st.execute("CREATE ROLE " + service + "_svc WITH LOGIN REPLICATION PASSWORD '" + service + "_svc'");
                st.execute("CREATE DATABASE " + service + "_db OWNER " + service + "_svc");
                // as deploy/stack/postgres.sh: a service's role reaches its own database only
                st.execute("REVOKE CONNECT, TEMPORARY ON DATABASE " + service + "_db FROM PUBLIC");
            }
        } catch (Exception e) {
            throw new IllegalStateException("could not prepare the PostgreSQL container", e);
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.getBootstrapServers()))) {
            List<NewTopic> topics = new ArrayList<>();
            Topics.EVENT_TOPICS.forEach(t -> topics.add(new NewTopic(t, 3, (short) 1)));
            Topics.DLQ_TOPICS.forEach(t -> topics.add(new NewTopic(t, 1, (short) 1)));
            Topics.REPLAY_TOPICS.forEach(t -> topics.add(new NewTopic(t, 1, (short) 1)));
            admin.createTopics(topics).all().get();
        } catch (Exception e) {
            throw new IllegalStateException("could not create the topics", e);
        }
        return new TestStack.Endpoints(postgres.getHost(), postgres.getMappedPort(5432), kafka.getBootstrapServers(),
                "postgres", "postgres");
    }
}
