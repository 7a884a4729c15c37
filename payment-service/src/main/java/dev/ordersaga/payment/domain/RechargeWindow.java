package dev.ordersaga.payment.domain;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * How long after a payment began charging the provider's "no charge under this key" is taken at its word, so that the
 * charge is sent again under the same key. Providers forget idempotency keys after a while (Stripe after 24 hours):
 * past that, "no charge" may mean "a charge I no longer know by this key", and a charge sent then would be a second
 * one. So once the window has passed, the payment is held for an operator instead ({@link Payment#chargeHeld}). The
 * window must be well inside the provider's key retention.
 */
public record RechargeWindow(Duration length) {

    public RechargeWindow {
        Objects.requireNonNull(length, "length");
        if (length.isNegative()) {
            throw new IllegalArgumentException("length must not be negative: " + length);
        }
    }

    /**
     * Whether a charge the provider says it never saw may be sent again now. A payment with no known start of charging
     * is treated as too old: holding it costs a person's look, charging it twice costs the customer.
     */
    public boolean allowsChargeAgain(Instant chargingSince, Instant now) {
        return chargingSince != null && now.isBefore(chargingSince.plus(length));
    }
}
