package dev.ordersaga.systemtest;

import dev.ordersaga.systemtest.SagaSystem.Line;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes manifests have every service verify its database's certificate (DB_URL with sslmode=verify-full
 * and the cluster's CA as sslrootcert, deploy/kubernetes/base/kustomization.yaml). Here a PostgreSQL that takes TLS
 * only serves all four databases, and each service is told to trust its certificate through DB_URL alone, as there:
 * the saga must go through, with every session of the services over TLS, their relays' replication sessions among
 * them; and a service told to trust another CA, or dialling the server under a name its certificate does not carry,
 * must not start on that server.
 */
class PostgresTlsIT {

    private static final Duration SETTLED = Duration.ofSeconds(90);
    private static final List<String> SERVICES = List.of("order", "inventory", "payment", "shipping");

    @Test
    void everyServiceVerifiesItsDatabasesCertificateAndRefusesAnother() throws Exception {
        try (SecuredPostgres postgres = SecuredPostgres.start()) {
            try (SagaSystem saga = SagaSystem.start("postgres-tls", Map.of(), 1,
                    service -> postgres.serviceEnvironment(service, "server"))) {
                String sku = "TLS-" + UUID.randomUUID();
                saga.stock(sku, 5);
                UUID order = saga.place("tls-" + UUID.randomUUID(), "tok_ok", "12 St James Square", new Line(sku, 1, "10.50"));
                assertThat(saga.awaitStatus(order, "CONFIRMED", SETTLED).path("status").asText()).isEqualTo("CONFIRMED");

                List<String> sessions = postgres.serviceSessions();
                for (String service : SERVICES) {
                    assertThat(postgres.slotRead(service)).as(service + "'s slot read by its relay").isTrue();
                    assertThat(sessions).as(service + "'s sessions").contains(
                            service + "_svc client backend tls", service + "_svc walsender tls");
                }
            }

            // the same server, but the service was told to trust another CA: it must not take this server for its own
            ServiceProcess.assertRefusesToStart("inventory-service", "postgres-tls-other-ca", 18182,
                    Map.of("eventing.relay.prepare-deadline", "PT5S"),
                    postgres.serviceEnvironment("inventory-service", "impostor"), "PKIX path");

            // the right CA, but the server dialled under a name its certificate does not carry: verify-full checks the
            // name too, so a certificate the CA signed for another host does not pass for this one
            ServiceProcess.assertRefusesToStart("inventory-service", "postgres-tls-other-name", 18182,
                    Map.of("eventing.relay.prepare-deadline", "PT5S"),
                    postgres.serviceEnvironment("inventory-service", SecuredPostgres.UNNAMED_HOST, "server"),
                    "The hostname " + SecuredPostgres.UNNAMED_HOST + " could not be verified");
        }
    }
}
