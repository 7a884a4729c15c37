package dev.ordersaga.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
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
        try (AutoCloseable sandbox = start("payment", "--port", "0",
                "--webhook-url", "http://127.0.0.1:1/webhooks/payment-provider", "--webhook-secret", "s3cret",
                "--timeout-delay", "1500ms",
                "--webhook-delay", "100ms")) {
            PaymentSandbox payment = (PaymentSandbox) sandbox;
            assertThat(new SandboxClient(payment.baseUrl()).ledger().get("charges")).isEmpty();
        }
    }

    @Test
    void thePaymentSandboxTakesItsWebhookSecretFromTheEnvironmentWhereNoArgumentGivesIt() throws Exception {
        String[] args = {"payment", "--port", "0", "--webhook-url", "http://127.0.0.1:1/webhooks/payment-provider"};
        assertThatThrownBy(() -> SandboxMain.start(args, Map.of())).hasMessageContaining("webhook secret");

        try (AutoCloseable sandbox = SandboxMain.start(args,
                Map.of(SandboxMain.WEBHOOK_SECRET_VARIABLE, "from-the-environment"))) {
            assertThat(sandbox).isInstanceOf(PaymentSandbox.class);
        }
    }

    @Test
    void startsTheCarrierSandbox() throws Exception {
        try (AutoCloseable sandbox = start("carrier", "--port", "0")) {
            CarrierSandbox carrier = (CarrierSandbox) sandbox;
            assertThat(new SandboxClient(carrier.baseUrl()).ledger().get("shipments")).isEmpty();
        }
    }

    @Test
    void listensOnEveryAddressWithHostZero() throws Exception {
        assumeLoopbackAliases();
        try (AutoCloseable payment = start("payment", "--host", "0.0.0.0", "--port", "0");
             AutoCloseable carrier = start("carrier", "--host", "0.0.0.0", "--port", "0")) {
            String paymentUrl = ((PaymentSandbox) payment).baseUrl();
            String carrierUrl = ((CarrierSandbox) carrier).baseUrl();
            assertThat(paymentUrl).startsWith("http://127.0.0.1:");
            assertThat(new SandboxClient(otherLoopbackAddress(paymentUrl)).ledger().get("charges")).isEmpty();
            assertThat(new SandboxClient(otherLoopbackAddress(carrierUrl)).ledger().get("shipments")).isEmpty();
        }
    }

    @Test
    void listensOnLoopbackOnlyByDefault() throws Exception {
        assumeLoopbackAliases();
        try (AutoCloseable carrier = start("carrier", "--port", "0")) {
            String url = ((CarrierSandbox) carrier).baseUrl();
            assertThat(new SandboxClient(url).ledger().get("shipments")).isEmpty();
            assertThatThrownBy(() -> new SandboxClient(otherLoopbackAddress(url)).ledger())
                    .isInstanceOf(UncheckedIOException.class)
                    .hasCauseInstanceOf(ConnectException.class);
        }
    }

    @Test
    void refusesWhatItCannotRead() {
        assertThatThrownBy(() -> start()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> start("bank"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> start("carrier", "--webhook-url", "http://x"))
                .hasMessageContaining("--webhook-url");
        assertThatThrownBy(() -> start("payment", "--port"))
                .hasMessageContaining("needs a value");
        assertThatThrownBy(() -> start("payment", "--port", "x"))
                .hasMessageContaining("not a port");
        assertThatThrownBy(() -> start("carrier", "--host", "no-such-host.invalid"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not an address to listen on");
    }

    /** As the command line starts it, with an environment that says nothing. */
    private static AutoCloseable start(String... args) {
        return SandboxMain.start(args, Map.of());
    }

    /** 127.0.0.2 is this machine as well, but not the address a sandbox bound to 127.0.0.1 answers on. */
    private static String otherLoopbackAddress(String baseUrl) {
        return baseUrl.replace("://127.0.0.1:", "://127.0.0.2:");
    }

    /** Linux routes all of 127.0.0.0/8 to the loopback interface; other systems may have 127.0.0.1 only. */
    private static void assumeLoopbackAliases() {
        assumeTrue(System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux"),
                "needs 127.0.0.2 on the loopback interface");
    }
}
