package dev.ordersaga.systemtest;

import dev.ordersaga.testing.IdentityProviderStandIn;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.equalTo;

/**
 * Operators have an account each, read by the packaged service from a file of digests that QUARKUS_CONFIG_LOCATIONS
 * names, as on Kubernetes (the Secret order-saga-operators), and made by the script operators use: each person's
 * password lets that person in, and nobody else; and a service no person could operate, or whose file holds a
 * password where its digest belongs, does not start. Where operators sign in through the company's identity provider
 * instead, a service starts without accounts, but not without the audience the provider's tokens must name.
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
        ServiceProcess.assertRefusesToStart("order-service", "operator-accounts-none", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", noAccounts("operator-accounts-none.properties").toAbsolutePath().toString()),
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

    @Test
    void aServiceWhoseOperatorsSignInThroughTheIdentityProviderNeedsNoAccounts() throws Exception {
        IdentityProviderStandIn provider = IdentityProviderStandIn.shared();
        Path file = withProvider(noAccounts("operator-sign-in.properties"), provider.serviceConfiguration());
        try (ServiceProcess order = ServiceProcess.start("order-service", "operator-sign-in", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", file.toAbsolutePath().toString()))) {
            order.awaitReady();
            assertThat(given().baseUri(order.baseUrl()).auth().oauth2(provider.tokenFor("carol", "operator"))
                    .get("/operator/orders?waiting=true").statusCode()).isEqualTo(200);
            assertThat(given().baseUri(order.baseUrl()).auth().oauth2(provider.tokenFor("dave", "staff"))
                    .get("/operator/orders?waiting=true").statusCode()).as("not in the group").isEqualTo(403);
            assertThat(given().baseUri(order.baseUrl()).auth().oauth2(provider.forge(provider.claimsFor("carol", "operator")))
                    .get("/operator/orders?waiting=true").statusCode()).as("forged").isEqualTo(401);
            assertThat(status(order, "operator", ServiceProcess.OPERATOR_PASSWORD)).as("no basic account").isEqualTo(401);
        }
    }

    /**
     * An outage of the identity provider takes no service down: tokens are asked to come back, the basic accounts do
     * not wait, and once the provider is back its tokens are taken without a restart.
     */
    @Test
    void aServiceStartsWhileTheIdentityProviderIsAwayAndTakesItsTokensOnceItIsBack() throws Exception {
        int nothingListens;
        try (ServerSocket socket = new ServerSocket(0)) {
            nothingListens = socket.getLocalPort();
        }
        Map<String, String> settings = new HashMap<>(IdentityProviderStandIn.shared().serviceConfiguration());
        settings.put("quarkus.oidc.auth-server-url", "http://127.0.0.1:" + nothingListens);
        Path file = withProvider(ServiceProcess.operatorAccounts("operator-accounts-away.properties",
                Map.of("alice", "correct horse battery staple")), settings);
        try (ServiceProcess order = ServiceProcess.start("order-service", "operator-sign-in-away", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", file.toAbsolutePath().toString()))) {
            order.awaitReady();
            given().baseUri(order.baseUrl()).auth().oauth2(IdentityProviderStandIn.shared().tokenFor("carol", "operator"))
                    .get("/operator/orders?waiting=true")
                    .then().statusCode(503)
                    .header("Retry-After", "10")
                    .contentType("application/problem+json")
                    .body("title", equalTo("Identity provider unavailable"));
            assertThat(status(order, "alice", "correct horse battery staple")).as("the break-glass account").isEqualTo(200);

            try (IdentityProviderStandIn back = IdentityProviderStandIn.startOn(nothingListens)) {
                given().baseUri(order.baseUrl()).auth().oauth2(back.tokenFor("carol", "operator"))
                        .get("/operator/orders?waiting=true").then().statusCode(200);
            }
        }
    }

    @Test
    void anIdentityProviderWhoseTokensNeedNotNameTheseServicesStopsTheStart() throws Exception {
        Map<String, String> settings = new HashMap<>(IdentityProviderStandIn.shared().serviceConfiguration());
        settings.remove("quarkus.oidc.token.audience");
        Path file = withProvider(noAccounts("operator-sign-in-any-audience.properties"), settings);
        ServiceProcess.assertRefusesToStart("order-service", "operator-sign-in-any-audience", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", file.toAbsolutePath().toString()),
                "the identity provider's tokens are taken whatever application they were issued for");
    }

    /** A second tenant on the operators' paths takes tokens on its own: its audience is checked as the default's is. */
    @Test
    void aNamedTenantWhoseTokensNeedNotNameTheseServicesStopsTheStart() throws Exception {
        IdentityProviderStandIn provider = IdentityProviderStandIn.shared();
        Map<String, String> settings = new HashMap<>(provider.serviceConfiguration());
        settings.put("quarkus.oidc.partner.auth-server-url", provider.issuer());
        settings.put("quarkus.oidc.partner.tenant-paths", "/operator/*");
        Path file = withProvider(noAccounts("operator-sign-in-named-tenant.properties"), settings);
        ServiceProcess.assertRefusesToStart("order-service", "operator-sign-in-named-tenant", PORT, Map.of(),
                Map.of("QUARKUS_CONFIG_LOCATIONS", file.toAbsolutePath().toString()),
                "tenant partner: the identity provider's tokens are taken whatever application they were issued for");
    }

    /** The provider's settings added to the operators' file, where deploy/kubernetes/README.md puts them. */
    private static Path withProvider(Path file, Map<String, String> settings) throws IOException {
        StringBuilder lines = new StringBuilder();
        settings.forEach((key, value) -> lines.append(key).append('=').append(value).append('\n'));
        Files.writeString(file, lines, StandardOpenOption.APPEND);
        return file;
    }

    private static Path noAccounts(String file) throws IOException {
        Path none = Path.of("target", file);
        Files.writeString(none, "# no account\n");
        return none;
    }

    private static int status(ServiceProcess service, String name, String password) {
        return given().baseUri(service.baseUrl()).auth().preemptive().basic(name, password)
                .get("/operator/orders?waiting=true").statusCode();
    }
}
