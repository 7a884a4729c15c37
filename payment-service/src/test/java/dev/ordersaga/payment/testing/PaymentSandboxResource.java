package dev.ordersaga.payment.testing;

import dev.ordersaga.sandbox.PaymentSandbox;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.time.Duration;
import java.util.Map;

/**
 * The payment provider's sandbox, in the test JVM, for as long as the application under test runs. Without a
 * webhook URL (the application's port is not known up front): tests post the provider's webhooks themselves.
 * The timeout tokens hold their answer back longer than the client's timeout (1 s).
 */
public class PaymentSandboxResource implements QuarkusTestResourceLifecycleManager {

    public static final Duration TIMEOUT_DELAY = Duration.ofSeconds(2);

    private PaymentSandbox sandbox;

    @Override
    public Map<String, String> start() {
        sandbox = PaymentSandbox.start(0, null, TIMEOUT_DELAY);
        return Map.of("payment.provider.url", sandbox.baseUrl(), "payment.provider.timeout", "1s");
    }

    @Override
    public void stop() {
        if (sandbox != null) {
            sandbox.close();
        }
    }
}
