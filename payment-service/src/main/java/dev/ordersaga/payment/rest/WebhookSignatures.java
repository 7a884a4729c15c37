package dev.ordersaga.payment.rest;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * The provider's signature on its webhooks, in the scheme real providers use: the header
 * {@code Provider-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">} under a secret shared with
 * the provider. Without it, anyone who learns a payment id — it travels in every payment event and log line — could
 * post "charge.succeeded" and have an unpaid order shipped, or name another order's charge in a refund.
 *
 * <p>The time bounds how long a captured webhook can be played back; one played back within it changes nothing,
 * since webhooks are idempotent. Several secrets may be configured, so that a new one can be rolled out here before
 * the provider signs with it; a header may carry several {@code v1} signatures for the same reason.
 */
@ApplicationScoped
public class WebhookSignatures {

    public static final String HEADER = "Provider-Signature";
    private static final String HMAC = "HmacSHA256";

    private final List<String> secrets;
    private final Duration tolerance;

    public WebhookSignatures(@ConfigProperty(name = "payment.provider.webhook-secret") List<String> secrets,
                             @ConfigProperty(name = "payment.provider.webhook-tolerance", defaultValue = "PT5M")
                             Duration tolerance) {
        // "old, new" as a person writes a rotation: a blank kept in a secret would refuse every webhook signed with it
        this.secrets = secrets.stream().map(String::strip).filter(secret -> !secret.isEmpty()).toList();
        if (this.secrets.isEmpty()) {
            throw new IllegalStateException("payment.provider.webhook-secret names no secret");
        }
        this.tolerance = tolerance;
    }

    /** Why the header does not vouch for the body, or empty if it does. */
    public Optional<String> refusal(String header, byte[] body, Instant now) {
        if (header == null || header.isBlank()) {
            return Optional.of("no " + HEADER + " header");
        }
        Long sentAt = null;
        List<byte[]> signatures = new ArrayList<>();
        for (String part : header.split(",")) {
            String[] pair = part.trim().split("=", 2);
            if (pair.length != 2) {
                continue;
            }
            try {
                switch (pair[0]) {
                    case "t" -> sentAt = Long.parseLong(pair[1]);
                    case "v1" -> signatures.add(HexFormat.of().parseHex(pair[1]));
                    default -> {
                        // another scheme's signature: not ours to check
                    }
                }
            } catch (IllegalArgumentException malformed) {
                return Optional.of(HEADER + " is malformed");
            }
        }
        if (sentAt == null || signatures.isEmpty()) {
            return Optional.of(HEADER + " has no t= or no v1=");
        }
        // in seconds, with no Instant made of it: a made-up t far outside Instant's range must be refused, not thrown
        if (Math.abs((double) now.getEpochSecond() - sentAt) > tolerance.toSeconds()) {
            return Optional.of(HEADER + " was made at t=" + sentAt + ", over " + tolerance + " from now");
        }
        for (String secret : secrets) {
            byte[] expected = mac(secret, sentAt, body);
            for (byte[] signature : signatures) {
                if (MessageDigest.isEqual(expected, signature)) {
                    return Optional.empty();
                }
            }
        }
        return Optional.of(HEADER + " does not match the body under any configured secret");
    }

    /** The header the provider sends with {@code body} at {@code sentAt}: for tests that play the provider. */
    public static String sign(String secret, long sentAt, byte[] body) {
        return "t=" + sentAt + ",v1=" + HexFormat.of().formatHex(mac(secret, sentAt, body));
    }

    private static byte[] mac(String secret, long sentAt, byte[] body) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), HMAC));
            mac.update((sentAt + ".").getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no " + HMAC + " in this JDK", e);
        }
    }
}
