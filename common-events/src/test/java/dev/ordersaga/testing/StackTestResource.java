package dev.ordersaga.testing;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/** Points an in-process Quarkus test at the stack {@link TestStack} found. */
public class StackTestResource implements QuarkusTestResourceLifecycleManager {

    @Override
    public Map<String, String> start() {
        TestStack.Endpoints stack = TestStack.endpoints();
        return Map.of(
                "PG_HOST", stack.postgresHost(),
                "PG_PORT", Integer.toString(stack.postgresPort()),
                "kafka.bootstrap.servers", stack.kafkaBootstrap());
    }

    @Override
    public void stop() {
        // the stack outlives the test: it is the machine's, or the JVM's (containers)
    }
}
