package dev.ordersaga.work;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProviderHttpTest {

    private HttpServer server;
    private final List<String> seen = new CopyOnWriteArrayList<>();
    private final List<Integer> clientPorts = new CopyOnWriteArrayList<>();
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/echo", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            seen.add(exchange.getRequestMethod() + " " + exchange.getRequestHeaders().getFirst("Idempotency-Key")
                    + " " + exchange.getRequestHeaders().getFirst("Content-Type") + " " + body);
            clientPorts.add(exchange.getRemoteAddress().getPort());
            answer(exchange, 201, "{\"echo\":" + (body.isEmpty() ? "null" : body) + "}");
        });
        server.createContext("/refuse", exchange -> answer(exchange, 422, "{\"reason\":\"no\"}"));
        server.createContext("/slow", exchange -> {
            try {
                release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            answer(exchange, 200, "{\"late\":true}");
        });
        // every byte of the answer within the read timeout, the whole of it long after: a provider that trickles
        server.createContext("/trickle", exchange -> {
            exchange.sendResponseHeaders(200, 20);
            try (OutputStream out = exchange.getResponseBody()) {
                for (int i = 0; i < 20 && release.getCount() > 0; i++) {
                    out.write('x');
                    out.flush();
                    release.await(250, TimeUnit.MILLISECONDS); // the provider's pace, not a wait for a condition
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (IOException callerGone) {
                // the deadline closed the connection
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        release.countDown();
        server.stop(0);
    }

    @Test
    void sendsTheBodyAndHeadersAndReadsTheAnswer() throws IOException {
        ProviderHttp http = new ProviderHttp(baseUrl() + "/", Duration.ofSeconds(2));

        ProviderHttp.Answer answer = http.exchange("POST", "/echo", Map.of("Idempotency-Key", "key-1"), "{\"a\":1}");

        assertThat(answer).isEqualTo(new ProviderHttp.Answer(201, "{\"echo\":{\"a\":1}}"));
        assertThat(seen).containsExactly("POST key-1 application/json {\"a\":1}");
    }

    @Test
    void anErrorStatusIsAnAnswerWithItsBody() throws IOException {
        ProviderHttp http = new ProviderHttp(baseUrl(), Duration.ofSeconds(2));

        assertThat(http.exchange("GET", "/refuse", Map.of(), null)).isEqualTo(new ProviderHttp.Answer(422, "{\"reason\":\"no\"}"));
    }

    @Test
    void callsReuseOneKeptAliveConnection() throws IOException {
        ProviderHttp http = new ProviderHttp(baseUrl(), Duration.ofSeconds(2));

        for (int i = 0; i < 5; i++) {
            assertThat(http.exchange("GET", "/echo", Map.of(), null).status()).isEqualTo(201);
        }

        assertThat(clientPorts).hasSize(5).containsOnly(clientPorts.get(0));
    }

    @Test
    void aSlowProviderIsNoAnswerInTimeAndItsLateAnswerIsNeverTakenForTheNextOne() throws IOException {
        ProviderHttp http = new ProviderHttp(baseUrl(), Duration.ofMillis(300));

        assertThatThrownBy(() -> http.exchange("POST", "/slow", Map.of("Idempotency-Key", "k"), "{}"))
                .isInstanceOf(ProviderHttp.NoAnswerInTime.class);
        release.countDown();

        assertThat(http.exchange("POST", "/echo", Map.of(), "{\"n\":2}")).isEqualTo(new ProviderHttp.Answer(201, "{\"echo\":{\"n\":2}}"));
    }

    /**
     * Each read comes within the 300 ms timeout; the whole answer would take 5 s, and the exchange ends at the first
     * read after 600 ms.
     */
    @Test
    void aProviderThatTricklesItsAnswerIsCutOffAtTwiceTheTimeout() throws IOException {
        ProviderHttp http = new ProviderHttp(baseUrl(), Duration.ofMillis(300));

        long started = System.nanoTime();
        assertThatThrownBy(() -> http.exchange("GET", "/trickle", Map.of(), null))
                .isInstanceOf(ProviderHttp.NoAnswerInTime.class)
                .hasMessageContaining("no whole answer within 600 ms");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("ended long before the provider's last byte")
                .isLessThan(Duration.ofSeconds(4));
        release.countDown();

        assertThat(http.exchange("POST", "/echo", Map.of(), "{\"n\":3}")).isEqualTo(new ProviderHttp.Answer(201, "{\"echo\":{\"n\":3}}"));
    }

    @Test
    void aProviderNotListeningIsNotConnected() throws IOException {
        int freePort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            freePort = socket.getLocalPort();
        }
        ProviderHttp http = new ProviderHttp("http://127.0.0.1:" + freePort, Duration.ofSeconds(1));

        assertThatThrownBy(() -> http.exchange("POST", "/echo", Map.of(), "{}")).isInstanceOf(ProviderHttp.NotConnected.class);
    }

    /**
     * The connect timeout does not bound the lookup of the provider's name: a connection opened after the exchange's
     * deadline sends nothing, where the request would have reached the provider after the worker's lease.
     */
    @Test
    void aConnectionOpenedAfterTheDeadlineSendsNothing() throws IOException {
        Duration timeout = Duration.ofMillis(200);
        AtomicBoolean slowLookup = new AtomicBoolean(true);
        ProviderHttp http = new ProviderHttp(baseUrl(), timeout, connection -> {
            if (slowLookup.getAndSet(false)) {
                try {
                    // a resolver's pace, not a wait for a condition: the lookup outlasts the deadline (twice the
                    // timeout)
                    Thread.sleep(timeout.multipliedBy(3).toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            connection.connect();
        });

        assertThatThrownBy(() -> http.exchange("POST", "/echo", Map.of("Idempotency-Key", "k-late"), "{}"))
                .isInstanceOf(ProviderHttp.NotConnected.class).hasMessageContaining("after the exchange's deadline");
        assertThat(http.exchange("POST", "/echo", Map.of("Idempotency-Key", "k-next"), "{}").status())
                .as("the provider answers the next one").isEqualTo(201);
        assertThat(seen).as("the late request never reached the provider").singleElement().asString()
                .startsWith("POST k-next ");
    }

    private String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
