package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Operators have an account each, read by the packaged service from a file of digests that QUARKUS_CONFIG_LOCATIONS
 * names, as on Kubernetes (the Secret order-saga-operators), and made by the script operators use: each person's
 * password lets that person in, and nobody else; and a service no person could operate, or whose file holds a
 * password where its digest belongs, does not start.
 */
class OperatorAccountsIT {

    private static final int PORT = 18191;

    @Test
    void eachPersonLogsInWithTheirOwnPasswordAndNobodyElseDoes() throws Exception {
        Path accounts = ServiceProcess.operatorAccounts("operator-accounts-it.properties",
                Map.of("alice", "correct horse battery staple", "bob", "Tr0ub4dor&3 and more"));
        assertThat(Files.readString(accounts)).as("no password kept as it is")
                .doesNotContain("correct horse").doesNotContain("Tr0ub4dor");

        try (ServiceProcess order = ServiceProcess.start("order-service", "operator-accounts", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", accounts.toAbsolutePath().toString()))) {
            order.awaitReady();
            assertThat(status(order, "alice", "correct horse battery staple")).isEqualTo(200);
            assertThat(status(order, "bob", "Tr0ub4dor&3 and more")).isEqualTo(200);
            assertThat(status(order, "bob", "correct horse battery staple")).as("another's password").isEqualTo(401);
            // the tests' and the local run's account is not in this file
            assertThat(status(order, "operator", ServiceProcess.OPERATOR_PASSWORD)).isEqualTo(401);
            // a person who knows the file's digest but not the password
            String digest = Files.readAllLines(accounts).stream().filter(line -> line.contains(".users.alice="))
                    .findFirst().orElseThrow().split("=", 2)[1];
            assertThat(status(order, "alice", digest)).isEqualTo(401);
        }
    }

    @Test
    void aServiceNobodyCouldOperateDoesNotStart() throws Exception {
        Path none = Path.of("target", "operator-accounts-none.properties");
        Files.writeString(none, "# no account\n");
        ServiceProcess.assertRefusesToStart("order-service", "operator-accounts-none", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", none.toAbsolutePath().toString()),
                "Operator accounts: no account has the role operator");
    }

    @Test
    void aPasswordWhereItsDigestBelongsStopsTheStartWithoutBeingLogged() throws Exception {
        // Quarkus' realm refuses what is no hexadecimal digest, naming the account
        Path plain = Path.of("target", "operator-accounts-plain.properties");
        Files.writeString(plain, """
                quarkus.security.users.embedded.users.alice=correct horse battery staple
                quarkus.security.users.embedded.roles.alice=operator
                """);
        ServiceProcess.assertRefusesToStart("order-service", "operator-accounts-plain", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", plain.toAbsolutePath().toString()),
                "Unable to register password for user:alice");
        assertThat(Files.readString(Path.of("target", "system-test-logs", "operator-accounts-plain.log")))
                .doesNotContain("correct horse");

        // but takes a digest of another length, sha256sum's where sha512sum's belongs, as one nobody could log in with
        Path sha256 = Path.of("target", "operator-accounts-sha256.properties");
        Files.writeString(sha256, """
                quarkus.security.users.embedded.users.alice=%s
                quarkus.security.users.embedded.roles.alice=operator
                """.formatted("ab".repeat(32)));
        ServiceProcess.assertRefusesToStart("order-service", "operator-accounts-sha256", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", sha256.toAbsolutePath().toString()),
                "the password of alice is not a digest-sha-512 digest (128 hexadecimal digits)");
    }

    private static int status(ServiceProcess service, String name, String password) {
        return given().baseUri(service.baseUrl()).auth().preemptive().basic(name, password)
                .get("/operator/orders?waiting=true").statusCode();
    }
}
