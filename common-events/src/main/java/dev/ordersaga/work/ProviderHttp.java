package dev.ordersaga.work;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One HTTP/1.1 exchange with an external provider, made on the calling thread: the {@link ProviderCalls} workers
 * block on their call anyway, and the JDK's asynchronous {@code HttpClient} kept threads of its own (selector,
 * scheduler) busy for about 15 % of payment's and shipping's CPU at saturation (async-profiler) just to hand each
 * small request back and forth. Connections are kept alive and reused by the JDK's keep-alive cache.
 *
 * <p>A failure says whether the request can have reached the provider: {@link NotConnected} means it certainly did
 * not (no connection was made), any other {@link IOException} (a {@link NoAnswerInTime}, a connection reset) means it
 * may have. The timeout bounds the connect and every read on its own, and the whole exchange ends at twice the timeout
 * (or, while the answer's body is read, at the first read that returns after that): the read timeout alone would let a
 * provider that trickles its answer a few bytes at a time hold the call for as long as it keeps sending, past the lease
 * its worker holds the row under.
 */
public final class ProviderHttp {

    /** A status and the body that came with it (empty when there was none). */
    public record Answer(int status, String body) {

        /** {@link ProviderHttp#refusal(int)} of this answer's status. */
        public boolean refusal() {
            return ProviderHttp.refusal(status);
        }
    }

    /**
     * The provider read the request and will not do it: a 4xx but 408 and 429, which ask to be called again, and 409,
     * a request under the same key still under way at some providers, which may yet be done. Only such an answer lets
     * an operator settle by hand what the call was for; a call without one may still have acted.
     */
    public static boolean refusal(int status) {
        return status >= 400 && status < 500 && status != 408 && status != 409 && status != 429;
    }

    /** No connection was made: the request never left this process. */
    public static final class NotConnected extends IOException {
        NotConnected(IOException cause) {
            super(cause.toString(), cause);
        }
    }

    /** Connected and sent, but no answer came within the timeout: the provider may have acted on the request. */
    public static final class NoAnswerInTime extends IOException {
        NoAnswerInTime(SocketTimeoutException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /**
     * Cuts the exchanges still waiting for their answer's head at their deadline; one thread for every instance, idle
     * but for that. Once the body is read the caller's own thread keeps the deadline: closing a connection whose
     * answer stream is open only closes that stream, and waits for the read that holds it.
     */
    private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();
    private static final int UNDER_WAY = 0;
    private static final int READING_BODY = 1;
    private static final int ENDED = 2;
    private static final int CUT_OFF = 3;

    private final String baseUrl;
    private final int timeoutMillis;
    private final Connector connector;

    /** Opens an exchange's connection: the lookup of the provider's name, then the TCP connect. */
    interface Connector {
        void connect(HttpURLConnection connection) throws IOException;
    }

    /**
     * @param baseUrl the provider's root, with or without a trailing slash
     * @param timeout the longest wait for a connection, and for each read of the answer
     */
    public ProviderHttp(String baseUrl, Duration timeout) {
        this(baseUrl, timeout, HttpURLConnection::connect);
    }

    /** @param connector in place of the JDK's, for a test whose lookup of the provider's name is slow */
    ProviderHttp(String baseUrl, Duration timeout, Connector connector) {
        this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl").replaceAll("/+$", "");
        this.timeoutMillis = Math.toIntExact(Math.max(1, Objects.requireNonNull(timeout, "timeout").toMillis()));
        this.connector = Objects.requireNonNull(connector, "connector");
    }

    /**
     * The longest one exchange can take: its deadline at twice the timeout, and a read of the answer's body under way
     * then, which returns within one timeout more.
     */
    public Duration longestExchange() {
        return Duration.ofMillis(3L * timeoutMillis);
    }

    /**
     * @param path     from the provider's root, already encoded
     * @param headers  request headers (Accept and Content-Type are set here)
     * @param jsonBody the JSON request body, or null for none
     */
    public Answer exchange(String method, String path, Map<String, String> headers, String jsonBody) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(baseUrl + path).toURL().openConnection(Proxy.NO_PROXY);
        boolean answered = false;
        // until the body is read, the deadline's thread may end the exchange by closing the connection; after, this one
        AtomicInteger end = new AtomicInteger(UNDER_WAY);
        long deadlineMillis = 2L * timeoutMillis;
        long deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deadlineMillis);
        ScheduledFuture<?> deadline = DEADLINES.schedule(() -> {
            if (end.compareAndSet(UNDER_WAY, CUT_OFF)) {
                connection.disconnect();
            }
        }, deadlineMillis, TimeUnit.MILLISECONDS);
        try {
            connection.setRequestMethod(method);
            connection.setConnectTimeout(timeoutMillis);
            connection.setReadTimeout(timeoutMillis);
            connection.setUseCaches(false);
            connection.setInstanceFollowRedirects(false);
            connection.setRequestProperty("Accept", "application/json");
            headers.forEach(connection::setRequestProperty);
            if (jsonBody != null) {
                connection.setRequestProperty("Content-Type", "application/json");
                connection.setDoOutput(true);
            }
            connect(connection, end, deadlineNanos, deadlineMillis);
            if (jsonBody != null) {
                // not in streaming mode: the body is buffered, so a kept-alive connection the provider had closed
                // is replaced and the request sent again (safe: every call carries an idempotency key)
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(jsonBody.getBytes(StandardCharsets.UTF_8));
                }
            }
            int status = connection.getResponseCode();
            if (!end.compareAndSet(UNDER_WAY, READING_BODY)) {
                throw noWholeAnswerWithin(deadlineMillis);
            }
            String body;
            try (InputStream in = status >= 400 ? connection.getErrorStream() : connection.getInputStream()) {
                // read to the end: only then does the connection go back to the keep-alive cache
                body = in == null ? "" : readBefore(in, deadlineNanos, deadlineMillis);
            }
            answered = true;
            return new Answer(status, body);
        } catch (NoAnswerInTime | NotConnected e) {
            throw e;
        } catch (SocketTimeoutException e) {
            throw new NoAnswerInTime(e);
        } catch (IOException e) {
            // the deadline closed the connection under a read or a write
            throw end.get() == CUT_OFF ? noWholeAnswerWithin(deadlineMillis) : e;
        } finally {
            end.compareAndSet(UNDER_WAY, ENDED);
            deadline.cancel(false);
            if (!answered) {
                // a late answer must never be read as the answer to the next request on this connection
                connection.disconnect();
            }
        }
    }

    private static String readBefore(InputStream in, long deadlineNanos, long deadlineMillis) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        for (int n = in.read(chunk); n != -1; n = in.read(chunk)) {
            body.write(chunk, 0, n);
            if (System.nanoTime() - deadlineNanos > 0) {
                throw noWholeAnswerWithin(deadlineMillis);
            }
        }
        return body.toString(StandardCharsets.UTF_8);
    }

    private static ScheduledThreadPoolExecutor deadlines() {
        ScheduledThreadPoolExecutor deadlines = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "provider-http-deadline");
            thread.setDaemon(true);
            return thread;
        });
        // nearly every exchange ends long before its deadline: its task goes at once, not when it would have run
        deadlines.setRemoveOnCancelPolicy(true);
        return deadlines;
    }

    private static NoAnswerInTime noWholeAnswerWithin(long millis) {
        return new NoAnswerInTime(new SocketTimeoutException("no whole answer within " + millis + " ms"));
    }

    private void connect(HttpURLConnection connection, AtomicInteger end, long deadlineNanos, long deadlineMillis)
            throws NotConnected {
        try {
            // refused, unreachable, unknown host or timed out: nothing was sent yet
            connector.connect(connection);
        } catch (IOException e) {
            throw new NotConnected(e);
        }
        // The connect timeout does not bound the lookup of the provider's name, which a slow resolver stretches past
        // the deadline, and the deadline cannot cut a connection that is not open yet: sent now, the request could
        // reach the provider after the worker's lease ran out, and another worker's call for the same row. Nothing is
        // sent yet, so it is not sent at all.
        if (end.get() == CUT_OFF || System.nanoTime() - deadlineNanos > 0) {
            throw new NotConnected(new SocketTimeoutException("connected only after the exchange's deadline of "
                    + deadlineMillis + " ms"));
        }
    }
}
