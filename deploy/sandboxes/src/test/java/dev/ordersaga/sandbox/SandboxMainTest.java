package dev.ordersaga.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SandboxMainTest {

    @Test
    void readsDurationsInMillisecondsAndSeconds() {
        assertThat(SandboxMain.duration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(SandboxMain.duration("3s")).isEqualTo(Duration.ofSeconds(3));
        assertThat(SandboxMain.duration("1500")).isEqualTo(Duration.ofMillis(1500));
        assertThatThrownBy(() -> SandboxMain.duration("3 minutes")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void startsThePaymentSandboxWithItsOptions() throws Exception {
        try (AutoCloseable sandbox = SandboxMain.start(new String[] {"payment", "--port", "0",
                "--webhook-url", "http://127.0.0.1:1/webhooks/payment-provider", "--timeout-delay", "1500ms",
                "--webhook-delay", "100ms"})) {
            PaymentSandbox payment = (PaymentSandbox) sandbox;
            assertThat(new SandboxClient(payment.baseUrl()).ledger().get("charges")).isEmpty();
        }
    }

    @Test
    void startsTheCarrierSandbox() throws Exception {
        try (AutoCloseable sandbox = SandboxMain.start(new String[] {"carrier", "--port", "0"})) {
            CarrierSandbox carrier = (CarrierSandbox) sandbox;
            assertThat(new SandboxClient(carrier.baseUrl()).ledger().get("shipments")).isEmpty();
        }
    }

    @Test
    void refusesWhatItCannotRead() {
        assertThatThrownBy(() -> SandboxMain.start(new String[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxMain.start(new String[] {"bank"}))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxMain.start(new String[] {"carrier", "--webhook-url", "http://x"}))
                .hasMessageContaining("--webhook-url");
        assertThatThrownBy(() -> SandboxMain.start(new String[] {"payment", "--port"}))
                .hasMessageContaining("needs a value");
        assertThatThrownBy(() -> SandboxMain.start(new String[] {"payment", "--port", "x"}))
                .hasMessageContaining("not a port");
    }
}
