package dev.ordersaga.eventing;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * Liveness of the relay: DOWN once it died ({@link CdcRelay#died}). Readiness alone ({@link RelayHealthCheck}) would
 * leave such an instance running unready for good, its outbox unpublished if it was the one streaming: an orchestrator
 * restarts only an instance that is not live. A standby, or a relay that is retrying, is live.
 */
@Liveness
@ApplicationScoped
public class RelayLivenessCheck implements HealthCheck {

    @Inject
    CdcRelay relay;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("cdc-relay-supervisor").status(!relay.died()).build();
    }
}
