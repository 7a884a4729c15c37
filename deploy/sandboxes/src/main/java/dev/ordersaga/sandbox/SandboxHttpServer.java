package dev.ordersaga.sandbox;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The HTTP shell shared by both sandboxes: routing, JSON errors, the slow mode, one log line per call, and a
 * clean close. Each call gets its own thread (a cached pool), because a sandbox holds answers back on purpose
 * and a held-back answer must never keep another call waiting.
 */
final class SandboxHttpServer implements AutoCloseable {

    /** Where a sandbox listens unless told otherwise: this machine only. */
    static final String DEFAULT_HOST = "127.0.0.1";
    private static final String PROVIDER_API = "/v1/";
    private static final String REPORTS = "/v1/reports/";

    static {
        // The JDK server writes an answer's headers and body separately; with Nagle's algorithm on, the body waits
        // for the client's delayed ACK of the headers, and a client calling in quick succession on a kept-alive
        // connection got every answer 40 ms late. Real providers' servers send without that delay, as here. Read
        // once, when the JDK's server configuration loads: before the first server of this process is created.
        System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    private final String name;
    private final List<Route> routes;
    private final HttpServer server;
    private final ExecutorService handlers;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Duration slowness = Duration.ZERO;
    /**
     * Answers to the saga's calls held back by {@link #slowness}, since the start: how a fault run knows its spell took
     * effect. Not the reports', which the services read on a schedule whatever the load: a spell that held back only
     * those made no call of an order go unanswered.
     */
    private final AtomicLong slowedAnswers = new AtomicLong();

    private SandboxHttpServer(String name, List<Route> routes, HttpServer server) {
        this.name = name;
        List<Route> all = new ArrayList<>(routes);
        all.add(Route.post("/sandbox/slow", this::slowDown));
        all.add(Route.get("/sandbox/slow", request -> slowState(slowness.toMillis())));
        this.routes = List.copyOf(all);
        this.server = server;
        this.handlers = Executors.newCachedThreadPool(threads(name + "-" + port() + "-http"));
        server.createContext("/", this::handle);
        server.setExecutor(handlers);
    }

    /**
     * Binds to {@code host}:{@code port} (0 = any free port) but does not serve yet, so that the sandbox can finish
     * building what its handlers use (knowing its port) before the first call comes in. The host is 127.0.0.1
     * unless the sandbox must be reached from elsewhere (0.0.0.0 in a container).
     */
    static SandboxHttpServer bind(String name, String host, int port, List<Route> routes) {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(host), port), 0);
            return new SandboxHttpServer(name, routes, server);
        } catch (IOException e) {
            throw new UncheckedIOException(name + " cannot listen on " + host + ":" + port, e);
        }
    }

    SandboxHttpServer start() {
        server.start();
        InetAddress bound = server.getAddress().getAddress();
        System.out.println("[" + name + "] listening on " + baseUrl()
                + (bound.isAnyLocalAddress() ? " (every address: " + bound.getHostAddress() + ")" : ""));
        return this;
    }

    /** Where this machine reaches the sandbox: 127.0.0.1 when it listens on every address. */
    String baseUrl() {
        InetAddress address = server.getAddress().getAddress();
        String host = address.isAnyLocalAddress() ? DEFAULT_HOST : address.getHostAddress();
        return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port();
    }

    /** Daemon threads named after the sandbox and its port, so a test can tell whose threads are left. */
    static ThreadFactory threads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /**
     * Frees the port at once and abandons held-back answers: their threads are interrupted, the callers see the
     * connection close, as with a provider that went away.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            server.stop(0);
            handlers.shutdownNow();
            System.out.println("[" + name + "] closed");
        }
    }

    int port() {
        return server.getAddress().getPort();
    }

    private Response slowDown(Request request) {
        SlowRequest slow = request.body(SlowRequest.class).validated();
        slowness = Duration.ofMillis(slow.delayMs());
        return slowState(slow.delayMs());
    }

    private Response slowState(long delayMs) {
        return Response.json(200, Json.object("delayMs", delayMs, "slowedAnswers", slowedAnswers.get()));
    }

    private void handle(HttpExchange exchange) {
        long started = System.nanoTime();
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getPath();
        try {
            Request request = new Request(method, path, exchange.getRequestURI().getRawQuery(), exchange.getRequestHeaders(),
                    exchange.getRequestBody().readAllBytes(), List.of());
            Response response = answer(request);
            Duration slowedBy = path.startsWith(PROVIDER_API) ? slowness : Duration.ZERO;
            if (!slowedBy.isZero() && !path.startsWith(REPORTS)) {
                slowedAnswers.incrementAndGet();
            }
            Duration delay = response.delay().plus(slowedBy);
            if (!holdBack(delay)) {
                return;
            }
            byte[] body = Json.write(response.body());
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(response.status(), body.length);
            exchange.getResponseBody().write(body);
            log(request, response.status(), started);
        } catch (IOException e) {
            // The caller gave up (its timeout) before the held-back answer: that is the point of holding it back.
            System.out.println("[" + name + "] " + method + " " + path + " -> caller gone: " + e.getMessage());
        } finally {
            exchange.close();
        }
    }

    private Response answer(Request request) {
        try {
            for (Route route : routes) {
                Optional<List<String>> params = route.match(request.method(), request.path());
                if (params.isPresent()) {
                    return route.handler().apply(new Request(request.method(), request.path(), request.rawQuery(),
                            request.headers(), request.body(), params.get()));
                }
            }
            throw ApiException.notFound("no endpoint " + request.method() + " " + request.path());
        } catch (ApiException e) {
            return Response.error(e);
        } catch (RuntimeException e) {
            e.printStackTrace();
            return Response.error(new ApiException(500, "sandbox failure: " + e));
        }
    }

    /** False if the sandbox is closing meanwhile: then nobody is owed an answer. */
    private static boolean holdBack(Duration delay) {
        if (delay.isZero()) {
            return true;
        }
        try {
            Thread.sleep(delay.toMillis());
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void log(Request request, int status, long startedNanos) {
        String key = request.idempotencyKeyOrNull();
        System.out.println("[" + name + "] " + request.method() + " " + request.path()
                + (key == null ? "" : " key=" + key) + " -> " + status
                + " (" + Duration.ofNanos(System.nanoTime() - startedNanos).toMillis() + " ms)");
    }

    record SlowRequest(Long delayMs) {
        SlowRequest validated() {
            if (delayMs == null || delayMs < 0) {
                throw ApiException.badRequest("delayMs must be a number >= 0");
            }
            return this;
        }
    }
}
