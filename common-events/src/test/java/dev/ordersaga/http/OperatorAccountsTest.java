package dev.ordersaga.http;

import io.quarkus.elytron.security.properties.runtime.DigestAlgorithm;
import io.quarkus.oidc.OidcTenantConfig;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import static dev.ordersaga.http.OperatorAccounts.IdentityProvider.OFF;
import static io.quarkus.elytron.security.properties.runtime.DigestAlgorithm.DIGEST_SHA_512;
import static org.assertj.core.api.Assertions.assertThat;

class OperatorAccountsTest {

    private static final String ALICE = digest("alice:Quarkus:a long passphrase");

    @Test
    void accountsWithDigestsAndTheRoleAreAccepted() {
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of("alice", ALICE, "viewer", ALICE),
                Map.of("alice", "auditor, operator", "viewer", "auditor"), OFF)).isEmpty();
    }

    @Test
    void aServiceNobodyCanOperateIsRefused() {
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(), OFF))
                .containsExactly("no account has the role operator");
        // an account without the role is no operator, a role without a password no account
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of("viewer", ALICE),
                Map.of("viewer", "auditor", "alice", "operator"), OFF))
                .containsExactly("no account has the role operator", "alice has the role operator but no password");
    }

    @Test
    void aPasswordWhereItsDigestBelongsIsRefusedNamingTheAccountNotThePassword() {
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512,
                Map.of("alice", ALICE, "bob", "hunter2", "carol", ALICE.toUpperCase(), "dave", ALICE.substring(2)),
                Map.of("alice", "operator", "bob", "operator", "carol", "operator", "dave", "operator"), OFF))
                .containsExactly(
                        "the password of bob is not a digest-sha-512 digest (128 hexadecimal digits): a password is never kept as it is",
                        "the password of dave is not a digest-sha-512 digest (128 hexadecimal digits): a password is never kept as it is")
                .noneMatch(problem -> problem.contains("hunter2"));
        // a realm told to keep passwords as they are (not this project's configuration) is not second-guessed
        assertThat(OperatorAccounts.problems(true, DIGEST_SHA_512, Map.of("bob", "hunter2"), Map.of("bob", "operator"), OFF))
                .isEmpty();
    }

    @Test
    void withTheIdentityProviderAccountsAreOptionalButStillChecked() {
        OperatorAccounts.IdentityProvider provider = new OperatorAccounts.IdentityProvider(true, true, true, true);
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(), provider)).isEmpty();
        // a break-glass account beside the provider is held to the same rules
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of("bob", "hunter2"),
                Map.of("bob", "operator", "alice", "operator"), provider))
                .containsExactly("alice has the role operator but no password",
                        "the password of bob is not a digest-sha-512 digest (128 hexadecimal digits): a password is never kept as it is");
    }

    @Test
    void anIdentityProviderWithoutItsNameOrTheServicesAudienceIsRefused() {
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of("alice", ALICE), Map.of("alice", "operator"),
                new OperatorAccounts.IdentityProvider(true, true, false, true)))
                .containsExactly("the identity provider's tokens are taken whatever application they were issued for");
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(),
                new OperatorAccounts.IdentityProvider(true, false, true, true)))
                .containsExactly("the identity provider is on but not named");
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(),
                new OperatorAccounts.IdentityProvider(true, true, true, false)))
                .containsExactly("tokens are taken whoever issued them (no issuer to check them against)");
    }

    /** A named tenant takes tokens on its paths whatever the default tenant says: it needs its own audience. */
    @Test
    void aNamedTenantIsHeldToTheSameRulesAsTheDefaultOne() {
        OperatorAccounts.IdentityProvider checkedProvider = new OperatorAccounts.IdentityProvider(true, true, true, true);
        OperatorAccounts.IdentityProvider anyAudience = new OperatorAccounts.IdentityProvider(true, true, false, true);
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(), checkedProvider,
                Map.of("partner", anyAudience, "staff", checkedProvider)))
                .containsExactly("tenant partner: the identity provider's tokens are taken whatever application they "
                        + "were issued for");
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(), checkedProvider,
                Map.of("old", new OperatorAccounts.IdentityProvider(false, false, false, false))))
                .as("a tenant turned off takes no token").isEmpty();
        assertThat(OperatorAccounts.problems(false, DIGEST_SHA_512, Map.of(), Map.of(), OFF, Map.of("staff", checkedProvider)))
                .as("the operators' endpoints are the default tenant's: a named one alone leaves them to the accounts")
                .containsExactly("no account has the role operator");
    }

    /** What Quarkus checks a tenant's tokens against, read from its configuration as Quarkus reads it. */
    @Test
    void aTenantsIssuerIsCheckedOnlyWhereQuarkusHasOneToCheckAgainst() {
        String url = "https://login.example.com/realms/staff";
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("staff").authServerUrl(url)
                .token().audience("order-saga").end().build()))
                .as("the issuer the discovery document names").isEqualTo(new OperatorAccounts.IdentityProvider(true, true, true, true));
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("staff").authServerUrl(url)
                .discoveryEnabled(false).token().audience("order-saga").end().build()).issuer())
                .as("discovery off and no token.issuer").isFalse();
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("staff")
                .publicKey("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA").token().audience("order-saga").end().build()))
                .as("a public key and no token.issuer").isEqualTo(new OperatorAccounts.IdentityProvider(true, true, true, false));
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("staff")
                .publicKey("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA").token().audience("order-saga").issuer(url).end()
                .build()).issuer()).as("a public key and token.issuer").isTrue();
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("staff").authServerUrl(url)
                .provider(io.quarkus.oidc.runtime.OidcTenantConfig.Provider.MICROSOFT).token().audience("order-saga").end().build()).issuer())
                .as("Microsoft's known settings take any issuer").isFalse();
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("staff").authServerUrl(url)
                .token().audience("any").issuer("any").end().build()))
                .isEqualTo(new OperatorAccounts.IdentityProvider(true, true, false, false));
        assertThat(OperatorAccounts.IdentityProvider.of(OidcTenantConfig.builder().tenantId("old").tenantEnabled(false)
                .build()).on()).isFalse();
    }

    @Test
    void quarkusAnyTurnsACheckOffAndSoCountsAsNone() {
        assertThat(OperatorAccounts.checked(List.of("order-saga"))).isTrue();
        assertThat(OperatorAccounts.checked(List.of("order-saga", "order-saga-staging"))).isTrue();
        assertThat(OperatorAccounts.checked(List.of())).isFalse();
        assertThat(OperatorAccounts.checked(List.of("any"))).isFalse();
        assertThat(OperatorAccounts.checked(List.of(" "))).isFalse();
    }

    @Test
    void everyAlgorithmTheRealmOffersHasItsDigestsLength() {
        assertThat(OperatorAccounts.digestLength(DigestAlgorithm.DIGEST_MD5)).isEqualTo(32);
        assertThat(OperatorAccounts.digestLength(DigestAlgorithm.DIGEST_SHA)).isEqualTo(40);
        assertThat(OperatorAccounts.digestLength(DigestAlgorithm.DIGEST_SHA_256)).isEqualTo(64);
        assertThat(OperatorAccounts.digestLength(DigestAlgorithm.DIGEST_SHA_384)).isEqualTo(96);
        assertThat(OperatorAccounts.digestLength(DIGEST_SHA_512)).isEqualTo(128);
        assertThat(OperatorAccounts.digestLength(DigestAlgorithm.DIGEST_SHA_512_256)).isEqualTo(64);
    }

    private static String digest(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-512").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
