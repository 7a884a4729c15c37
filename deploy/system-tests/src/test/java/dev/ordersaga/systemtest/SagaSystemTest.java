package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fault run's Kafka restart counts only if the broker the services use went away: the local stack's pid file changes
 * with any restart of the local broker, whichever one KAFKA_BOOTSTRAP_SERVERS names.
 */
class SagaSystemTest {

    @Test
    void aBootstrapListAnswersWhileAnyOfItsServersTakesAConnection() throws IOException {
        int closed;
        try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = gone.getLocalPort();
        }
        try (ServerSocket broker = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            String listening = "127.0.0.1:" + broker.getLocalPort();
            assertThat(SagaSystem.answers(listening)).isTrue();
            assertThat(SagaSystem.answers("127.0.0.1:" + closed + ", " + listening)).isTrue();
        }
        assertThat(SagaSystem.answers("127.0.0.1:" + closed)).isFalse();
    }
}
