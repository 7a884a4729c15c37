package dev.ordersaga.audit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OptionsTest {

    @TempDir
    Path dir;

    @Test
    void sinceWithTheDefaults() throws Exception {
        Options o = Options.parse(new String[] {"--since", "2026-01-31T10:15:00Z"}, Map.of());
        assertThat(o.since()).isEqualTo(Instant.parse("2026-01-31T10:15:00Z"));
        assertThat(o.ordersFile()).isNull();
        assertThat(o.pgHost()).isEqualTo("127.0.0.1");
        assertThat(o.pgPort()).isEqualTo(5432);
        assertThat(o.pgUser()).isEqualTo("postgres");
        assertThat(o.pgPassword()).isEqualTo("postgres");
        assertThat(o.kafka()).isEqualTo("127.0.0.1:9092");
        assertThat(o.paymentProvider()).isEqualTo(URI.create("http://127.0.0.1:9101"));
        assertThat(o.carrier()).isEqualTo(URI.create("http://127.0.0.1:9102"));
        assertThat(o.json()).isNull();
    }

    @Test
    void everyOptionAndTheEnvironmentsDefaults() throws Exception {
        Options o = Options.parse(new String[] {"--orders", "ids.txt", "--pg-host=db", "--pg-user", "u",
                "--pg-password", "p", "--kafka", "k:1", "--payment-provider", "http://127.0.0.1:19101/",
                "--carrier", "http://127.0.0.1:19102", "--json", "out/report.json", "--pg-port=6543"},
                Map.of("PG_HOST", "envhost", "KAFKA_BOOTSTRAP_SERVERS", "envkafka:9"));
        assertThat(o.ordersFile()).isEqualTo(Path.of("ids.txt"));
        assertThat(o.pgHost()).isEqualTo("db");
        assertThat(o.pgPort()).isEqualTo(6543);
        assertThat(o.kafka()).isEqualTo("k:1");
        assertThat(o.paymentProvider()).isEqualTo(URI.create("http://127.0.0.1:19101"));
        assertThat(o.json()).isEqualTo(Path.of("out/report.json"));

        Options env = Options.parse(new String[] {"--since", "2026-01-31T11:15:00+01:00"}, Map.of("PG_HOST", "envhost",
                "PG_PORT", "15432", "KAFKA_BOOTSTRAP_SERVERS", "envkafka:9"));
        assertThat(env.since()).isEqualTo(Instant.parse("2026-01-31T10:15:00Z"));
        assertThat(env.pgHost()).isEqualTo("envhost");
        assertThat(env.pgPort()).isEqualTo(15432);
        assertThat(env.kafka()).isEqualTo("envkafka:9");
    }

    @Test
    void theScopeIsExactlyOneOfSinceAndOrders() {
        assertThatThrownBy(() -> Options.parse(new String[] {}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("exactly one of --since");
        assertThatThrownBy(() -> Options.parse(new String[] {"--since", "2026-01-31T10:15:00Z", "--orders", "f"}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("exactly one of --since");
    }

    @Test
    void wrongArgumentsAreUsageErrors() {
        assertThatThrownBy(() -> Options.parse(new String[] {"--since", "yesterday"}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("not an ISO instant");
        assertThatThrownBy(() -> Options.parse(new String[] {"--since"}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("needs a value");
        assertThatThrownBy(() -> Options.parse(new String[] {"--since", "2026-01-31T10:15:00Z", "--colour", "red"}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("unknown option --colour");
        assertThatThrownBy(() -> Options.parse(new String[] {"--since", "2026-01-31T10:15:00Z", "--pg-port", "x"}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("not a port");
        assertThatThrownBy(() -> Options.parse(new String[] {"--since", "2026-01-31T10:15:00Z", "--carrier", "127.0.0.1:9102"},
                Map.of())).isInstanceOf(Options.UsageException.class).hasMessageContaining("not an http(s) URL");
        assertThatThrownBy(() -> Options.parse(new String[] {"stray"}, Map.of()))
                .isInstanceOf(Options.UsageException.class).hasMessageContaining("unexpected argument stray");
        assertThatThrownBy(() -> Options.parse(new String[] {"--help"}, Map.of())).isInstanceOf(Options.HelpRequested.class);
    }

    @Test
    void theOrdersFileListsIdsWithCommentsAndBlankLines() throws Exception {
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        Path file = Files.writeString(dir.resolve("ids.txt"), "# rule 1\n" + a + "\n\n  " + b + "  # the race\n" + a + "\n");
        assertThat(Options.readOrderIds(file)).containsExactly(a, b);

        Path bad = Files.writeString(dir.resolve("bad.txt"), a + "\nnot-an-id\n");
        assertThatThrownBy(() -> Options.readOrderIds(bad)).isInstanceOf(Options.UsageException.class)
                .hasMessageContaining("bad.txt:2: not an order id: not-an-id");
        Path empty = Files.writeString(dir.resolve("empty.txt"), "# nothing\n");
        assertThatThrownBy(() -> Options.readOrderIds(empty)).hasMessageContaining("lists no order id");
        assertThatThrownBy(() -> Options.readOrderIds(dir.resolve("missing.txt"))).hasMessageContaining("cannot read");
    }
}
