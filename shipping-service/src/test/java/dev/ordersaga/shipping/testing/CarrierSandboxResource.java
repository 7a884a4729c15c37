package dev.ordersaga.shipping.testing;

import dev.ordersaga.sandbox.CarrierSandbox;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/**
 * The carrier sandbox, in the test's JVM on a free port, with short retry delays so that the retry tests take
 * seconds. The test reads the carrier's address from {@code shipping.carrier.url}.
 */
public class CarrierSandboxResource implements QuarkusTestResourceLifecycleManager {

    private CarrierSandbox carrier;

    @Override
    public Map<String, String> start() {
        carrier = CarrierSandbox.start(0);
        return Map.of(
                "shipping.carrier.url", carrier.baseUrl(),
                "shipping.carrier.timeout", "2s",
                "shipping.retry.base-delay", "100ms",
                "shipping.retry.max-delay", "1s");
    }

    @Override
    public void stop() {
        if (carrier != null) {
            carrier.close();
        }
    }
}
