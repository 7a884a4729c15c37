package dev.ordersaga.testing;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An OpenID Connect provider as the services meet one: its discovery document and its signing keys (JWKS) over HTTP,
 * and access tokens it signs with them (RS256). The services fetch both as they would from the company's provider, so a
 * test exercises the same discovery, key selection and checks as production; only the sign-in that would hand a person
 * the token is left out. Tokens are made here, in the test, with whatever claims a case needs.
 */
public final class IdentityProviderStandIn implements AutoCloseable {

    /** The audience the services are configured to require: what the provider names them in the tokens it issues. */
    public static final String AUDIENCE = "order-saga";

    private static final Base64.Encoder URL = Base64.getUrlEncoder().withoutPadding();
    private static IdentityProviderStandIn shared;

    private final ObjectMapper json = new ObjectMapper();
    private final HttpServer server;
    /** The keys it publishes, the one it signs with last: a rotation adds one, as providers do for a while. */
    private final List<SigningKey> keys = new CopyOnWriteArrayList<>(List.of(SigningKey.create()));

    private record SigningKey(String id, KeyPair pair) {
        static SigningKey create() {
            return new SigningKey(UUID.randomUUID().toString(), rsa());
        }
    }

    private IdentityProviderStandIn(int port) {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/.well-known/openid-configuration", exchange -> answer(exchange, Map.of(
                "issuer", issuer(),
                "jwks_uri", issuer() + "/jwks",
                "id_token_signing_alg_values_supported", List.of("RS256"))));
        server.createContext("/jwks", exchange -> answer(exchange,
                Map.of("keys", keys.stream().map(IdentityProviderStandIn::jwk).toList())));
        server.start();
    }

    /** One provider for the JVM: the services under test keep the keys they fetched from it. */
    public static synchronized IdentityProviderStandIn shared() {
        if (shared == null) {
            shared = new IdentityProviderStandIn(0);
        }
        return shared;
    }

    /** A provider of its own on the given port: one that comes back where a service expects it. */
    public static IdentityProviderStandIn startOn(int port) {
        return new IdentityProviderStandIn(port);
    }

    /** The issuer URL, which is also where its discovery document is found. */
    public String issuer() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The configuration that points a service at this provider, as a deployment's operators' file does. */
    public Map<String, String> serviceConfiguration() {
        return Map.of(
                "quarkus.oidc.tenant-enabled", "true",
                "quarkus.oidc.auth-server-url", issuer(),
                "quarkus.oidc.token.audience", AUDIENCE);
    }

    /** A token for a person in the given groups, as the provider issues one for these services. */
    public String tokenFor(String name, String... groups) {
        return sign(claimsFor(name, groups));
    }

    /** The claims of {@link #tokenFor}, to be changed by a case before it {@link #sign}s them. */
    public Map<String, Object> claimsFor(String name, String... groups) {
        Instant now = Instant.now();
        Map<String, Object> claims = new LinkedHashMap<>();
        claims.put("iss", issuer());
        claims.put("aud", AUDIENCE);
        claims.put("sub", UUID.randomUUID().toString());
        claims.put("preferred_username", name);
        claims.put("groups", Arrays.asList(groups));
        claims.put("iat", now.getEpochSecond());
        claims.put("exp", now.plus(Duration.ofMinutes(5)).getEpochSecond());
        return claims;
    }

    /** Claims signed with this provider's published key. */
    public String sign(Map<String, Object> claims) {
        SigningKey current = current();
        return sign(claims, current.id(), current.pair().getPrivate());
    }

    /** Claims signed with a key the provider never published, under the published key's id: a forgery. */
    public String forge(Map<String, Object> claims) {
        return sign(claims, current().id(), rsa().getPrivate());
    }

    /** Starts signing with a new key, published beside the old ones: a key rotation. */
    public void rotateKeys() {
        keys.add(SigningKey.create());
    }

    private SigningKey current() {
        return keys.get(keys.size() - 1);
    }

    private String sign(Map<String, Object> claims, String keyId, PrivateKey key) {
        try {
            String header = URL.encodeToString(json.writeValueAsBytes(Map.of("alg", "RS256", "typ", "JWT", "kid", keyId)));
            String body = URL.encodeToString(json.writeValueAsBytes(claims));
            Signature rs256 = Signature.getInstance("SHA256withRSA");
            rs256.initSign(key);
            rs256.update((header + "." + body).getBytes(StandardCharsets.US_ASCII));
            return header + "." + body + "." + URL.encodeToString(rs256.sign());
        } catch (JsonProcessingException | GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, String> jwk(SigningKey signing) {
        RSAPublicKey key = (RSAPublicKey) signing.pair().getPublic();
        return Map.of("kty", "RSA", "use", "sig", "alg", "RS256", "kid", signing.id(),
                "n", unsigned(key.getModulus()), "e", unsigned(key.getPublicExponent()));
    }

    /** A JWK's integers are big-endian without the sign byte BigInteger adds to a number whose top bit is set. */
    private static String unsigned(BigInteger value) {
        byte[] bytes = value.toByteArray();
        return URL.encodeToString(bytes[0] == 0 ? Arrays.copyOfRange(bytes, 1, bytes.length) : bytes);
    }

    private void answer(HttpExchange exchange, Object document) throws IOException {
        byte[] body = json.writeValueAsBytes(document);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static KeyPair rsa() {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
