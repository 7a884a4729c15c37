package dev.ordersaga.http;

import io.quarkus.elytron.security.properties.runtime.DigestAlgorithm;
import io.quarkus.elytron.security.properties.runtime.MPRealmRuntimeConfig;
import io.quarkus.oidc.runtime.OidcConfig;
import io.quarkus.oidc.runtime.OidcTenantConfig;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.config.SmallRyeConfig;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Refuses to start a service that no person could operate, or whose operator accounts would let nobody in. Quarkus'
 * embedded realm refuses a password that is no hexadecimal digest, but takes a configuration without any account, a
 * role given to a name that has no password, or a digest of another algorithm's length (sha256sum's where sha512sum's
 * belongs) without a word; each only shows as a 401 when someone needs the endpoint, perhaps during an incident.
 * Each person has an account of their own, so that the actions an order's log records name who did them.
 * Where operators sign in through the company's identity provider, the accounts are optional (any there are still
 * checked), and the provider must be named with the audience of its tokens: without one (or with Quarkus' "any"), a
 * token the provider issued for any other application, to someone in the group, would let its holder in. A named tenant
 * ({@code quarkus.oidc.<tenant>.*}, which Quarkus applies to its {@code tenant-paths}) is held to the same rules: it
 * takes tokens on its own, whatever the default tenant's settings.
 */
@ApplicationScoped
public class OperatorAccounts {

    public static final String ROLE = "operator";
    static final String HOW = "Each person who operates the saga needs quarkus.security.users.embedded.users.<name>"
            + " (the digest deploy/operator-account.sh prints) and quarkus.security.users.embedded.roles.<name>="
            + ROLE + ", in a file that QUARKUS_CONFIG_LOCATIONS names (deploy/kubernetes/README.md)";
    static final String HOW_PROVIDER = "Operators who sign in through the identity provider need"
            + " quarkus.oidc.auth-server-url (its issuer) and quarkus.oidc.token.audience (what it names these services in"
            + " the tokens it issues for them), and each named tenant its own quarkus.oidc.<tenant>.auth-server-url and"
            + " quarkus.oidc.<tenant>.token.audience; with a public key, discovery off or a known provider, the issuer"
            + " (token.issuer) as well (deploy/kubernetes/README.md)";
    private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]+");

    // before the relay starts streaming (CdcRelay), so that a service refused here has published nothing
    void check(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE - 2) StartupEvent event) {
        Config config = ConfigProvider.getConfig();
        SmallRyeConfig smallRye = config.unwrap(SmallRyeConfig.class);
        MPRealmRuntimeConfig realm = smallRye.getConfigMapping(MPRealmRuntimeConfig.class);
        OidcConfig oidc = smallRye.getConfigMapping(OidcConfig.class);
        Map<String, IdentityProvider> namedTenants = new TreeMap<>();
        oidc.namedTenants().forEach((name, tenant) -> {
            if (!OidcConfig.DEFAULT_TENANT_KEY.equals(name)) {
                namedTenants.put(name, IdentityProvider.of(tenant));
            }
        });
        IdentityProvider defaultTenant = IdentityProvider.of(OidcConfig.getDefaultTenant(oidc));
        List<String> problems = problems(realm.plainText(), realm.algorithm(), realm.users(), realm.roles(),
                defaultTenant, namedTenants);
        if (!problems.isEmpty()) {
            boolean anyProvider = defaultTenant.on() || namedTenants.values().stream().anyMatch(IdentityProvider::on);
            List<String> how = new ArrayList<>();
            if (!defaultTenant.on()) {
                how.add(HOW);
            }
            if (anyProvider) {
                how.add(HOW_PROVIDER);
            }
            throw new IllegalStateException("Operator accounts: " + String.join("; ", problems) + ". "
                    + String.join(". ", how));
        }
    }

    /**
     * Whether operators sign in through the identity provider, whether it is named, and whether its tokens' audience and
     * issuer are checked.
     */
    record IdentityProvider(boolean on, boolean named, boolean audience, boolean issuer) {
        static final IdentityProvider OFF = new IdentityProvider(false, false, false, true);

        /**
         * Quarkus checks a token's issuer against {@code token.issuer}, else against the one its provider's discovery
         * document names: with a public key, or discovery off, there is none to check against. A known provider
         * ({@code provider=microsoft} and the like) brings settings the configuration does not show (Microsoft's
         * issuer is {@code any}), so with one the issuer must be set.
         */
        static IdentityProvider of(OidcTenantConfig tenant) {
            boolean discovered = tenant.authServerUrl().isPresent() && tenant.publicKey().isEmpty()
                    && tenant.discoveryEnabled().orElse(true) && tenant.provider().isEmpty();
            return new IdentityProvider(tenant.tenantEnabled(),
                    tenant.authServerUrl().isPresent() || tenant.publicKey().isPresent() || tenant.provider().isPresent(),
                    checked(tenant.token().audience().orElse(List.of())),
                    tenant.token().issuer().map(issuer -> checked(List.of(issuer))).orElse(discovered));
        }
    }

    /** Whether the default tenant, whose are the operators' endpoints, is on: read as the start's check reads it. */
    static boolean signInByIdentityProvider(Config config) {
        OidcConfig oidc = config.unwrap(SmallRyeConfig.class).getConfigMapping(OidcConfig.class);
        return OidcConfig.getDefaultTenant(oidc).tenantEnabled();
    }

    /** Quarkus checks a claim against configured values unless there are none, or the one value is "any". */
    static boolean checked(List<String> values) {
        return !values.isEmpty() && values.stream().noneMatch(value -> value.isBlank() || value.trim().equals("any"));
    }

    static List<String> problems(boolean plainText, DigestAlgorithm algorithm, Map<String, String> users,
                                 Map<String, String> roles, IdentityProvider provider) {
        return problems(plainText, algorithm, users, roles, provider, Map.of());
    }

    static List<String> problems(boolean plainText, DigestAlgorithm algorithm, Map<String, String> users,
                                 Map<String, String> roles, IdentityProvider defaultTenant,
                                 Map<String, IdentityProvider> namedTenants) {
        List<String> problems = new ArrayList<>();
        List<String> operators = new TreeSet<>(roles.keySet()).stream()
                .filter(name -> Arrays.stream(roles.get(name).split(",")).map(String::trim).anyMatch(ROLE::equals))
                .toList();
        if (defaultTenant.on()) {
            providerProblems(defaultTenant, "", problems);
        }
        new TreeMap<>(namedTenants).forEach((name, tenant) -> {
            if (tenant.on()) {
                providerProblems(tenant, "tenant " + name + ": ", problems);
            }
        });
        // the operators' endpoints are the default tenant's: a named one covers only the paths it is given
        if (!defaultTenant.on() && operators.stream().noneMatch(users::containsKey)) {
            problems.add("no account has the role " + ROLE);
        }
        operators.stream().filter(name -> !users.containsKey(name))
                .forEach(name -> problems.add(name + " has the role " + ROLE + " but no password"));
        if (!plainText) {
            int length = digestLength(algorithm);
            new TreeSet<>(users.keySet()).stream()
                    .filter(name -> users.get(name).length() != length || !HEX.matcher(users.get(name)).matches())
                    .forEach(name -> problems.add("the password of " + name + " is not a " + algorithm.getName()
                            + " digest (" + length + " hexadecimal digits): a password is never kept as it is"));
        }
        return problems;
    }

    private static void providerProblems(IdentityProvider provider, String tenant, List<String> problems) {
        if (!provider.named()) {
            problems.add(tenant + "the identity provider is on but not named");
        }
        if (!provider.audience()) {
            problems.add(tenant + "the identity provider's tokens are taken whatever application they were issued for");
        }
        if (!provider.issuer()) {
            problems.add(tenant + "tokens are taken whoever issued them (no issuer to check them against)");
        }
    }

    /** Hexadecimal digits in a digest of the realm's algorithm: its name is Elytron's, e.g. digest-sha-512. */
    static int digestLength(DigestAlgorithm algorithm) {
        String name = algorithm.getName().substring("digest-".length()).toUpperCase();
        try {
            return 2 * MessageDigest.getInstance(name.equals("SHA-512-256") ? "SHA-512/256" : name).getDigestLength();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JVM has no " + name + " for the operators' realm", e);
        }
    }
}
