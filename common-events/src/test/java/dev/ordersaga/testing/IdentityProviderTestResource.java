package dev.ordersaga.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/** Points an in-process Quarkus test at {@link IdentityProviderStandIn}: operators sign in with its tokens. */
public class IdentityProviderTestResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        return IdentityProviderStandIn.shared().serviceConfiguration();
    }

    @Override
    public void stop() {
        // the provider outlives the test, as a company's does; its port is the JVM's
    }
}
