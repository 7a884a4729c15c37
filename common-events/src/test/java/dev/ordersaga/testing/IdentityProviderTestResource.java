package dev.ordersaga.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.HashMap;
import java.util.Map;

/** Points an in-process Quarkus test at {@link IdentityProviderStandIn}: operators sign in with its tokens. */
public class IdentityProviderTestResource implements QuarkusTestResourceLifecycleManager {

    /** A group of another name in the provider's tokens, mapped to the role operator as a deployment may need to. */
    public static final String MAPPED_GROUP = "saga-operators";

    @Override
    public Map<String, String> start() {
        Map<String, String> configuration = new HashMap<>(IdentityProviderStandIn.shared().serviceConfiguration());
        configuration.put("quarkus.http.auth.roles-mapping.\"" + MAPPED_GROUP + "\"", "operator");
        return configuration;
    }

    @Override
    public void stop() {
        // the provider outlives the test, as a company's does; its port is the JVM's
    }
}
