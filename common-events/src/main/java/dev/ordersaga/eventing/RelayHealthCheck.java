package dev.ordersaga.eventing;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Readiness of the relay. A standby instance is ready: it serves HTTP and consumes, and only one instance may
 * stream. The role is reported so that an operator sees which instance streams.
 */
@Readiness
@ApplicationScoped
public class RelayHealthCheck implements HealthCheck {

    @Inject
    CdcRelay relay;

    @Override
    public HealthCheckResponse call() {
        RelayRole role = relay.role();
        HealthCheckResponseBuilder builder = HealthCheckResponse.named("cdc-relay")
                .status(role != RelayRole.STOPPED)
                .withData("role", role.name())
                .withData("slot", relay.slotName());
        String error = relay.lastError();
        if (error != null) {
            builder.withData("lastError", error);
        }
        return builder.build();
    }
}
