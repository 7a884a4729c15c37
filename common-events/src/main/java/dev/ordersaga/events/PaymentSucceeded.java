package dev.ordersaga.events;

import java.math.BigDecimal;

/** Step 3: the provider charged the customer. */
public record PaymentSucceeded(String paymentId, BigDecimal amount, String currency, String providerChargeId)
        implements PaymentEvent {
}
