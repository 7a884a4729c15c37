package dev.ordersaga.eventing;

import io.quarkus.runtime.ShutdownEvent;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RelayLivenessCheckTest {

    @Test
    void aRelayWhoseSupervisorEndedUnaskedIsNotLiveAndOneStoppedOnShutdownIs() throws Exception {
        RelayLivenessCheck check = new RelayLivenessCheck();
        check.relay = new CdcRelay();
        assertThat(check.call().getStatus()).as("not started (disabled, or before the start)")
                .isEqualTo(HealthCheckResponse.Status.UP);

        check.relay.supervisor = Thread.currentThread();
        assertThat(check.call().getStatus()).as("supervising").isEqualTo(HealthCheckResponse.Status.UP);

        Thread ended = new Thread(() -> { });
        ended.start();
        ended.join();
        check.relay.supervisor = ended;
        assertThat(check.call().getStatus()).as("died").isEqualTo(HealthCheckResponse.Status.DOWN);

        check.relay.onStop(new ShutdownEvent());
        assertThat(check.call().getStatus()).as("stopped with the service").isEqualTo(HealthCheckResponse.Status.UP);
    }
}
