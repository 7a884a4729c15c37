package dev.ordersaga.eventing;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ListeningSlotSocketFactoryTest {

    private static final int LONG_LISTEN_MS = 60_000;

    private ServerSocket server;
    private Socket client;
    private Socket peer;

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void close() {
        for (AutoCloseable c : new AutoCloseable[]{client, peer, server}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // closed by the test already
            }
        }
    }

    private InputStream connect(int listenMillis) throws IOException {
        client = new ListeningSlotSocketFactory(Integer.toString(listenMillis))
                .createSocket(server.getInetAddress(), server.getLocalPort());
        peer = server.accept();
        return client.getInputStream();
    }

    @Test
    void aCheckForPendingDataWaitsForDataThatComesLaterThanPgjdbcsMillisecond() throws Exception {
        InputStream in = connect(LONG_LISTEN_MS);
        client.setSoTimeout(ListeningSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);
        // the peer writes well after the millisecond pgjdbc's own check would have waited
        Executor later = CompletableFuture.delayedExecutor(200, TimeUnit.MILLISECONDS);
        CompletableFuture<Void> written = CompletableFuture.runAsync(() -> {
            try {
                peer.getOutputStream().write(new byte[]{7, 8});
                peer.getOutputStream().flush();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, later);

        byte[] read = new byte[2];
        int n = in.read(read, 0, 2);

        written.get(5, TimeUnit.SECONDS);
        assertThat(n).isPositive();
        assertThat(read[0]).isEqualTo((byte) 7);
    }

    @Test
    void aCheckThatHearsNothingEndsAfterTheListeningTimeAsATimeout() throws IOException {
        InputStream in = connect(50);
        client.setSoTimeout(ListeningSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);

        long started = System.nanoTime();
        assertThatThrownBy(() -> in.read(new byte[1], 0, 1)).isInstanceOf(SocketTimeoutException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isGreaterThanOrEqualTo(45);
        // pgjdbc's timeout is in place again for it to restore its own
        assertThat(client.getSoTimeout()).isEqualTo(ListeningSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);
    }

    @Test
    @Timeout(20)
    void aClosedPeerEndsTheWait() throws IOException {
        InputStream in = connect(LONG_LISTEN_MS);
        client.setSoTimeout(ListeningSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);
        peer.close();

        assertThat(in.read(new byte[1], 0, 1)).isEqualTo(-1);
    }

    @Test
    @Timeout(20)
    void readsUnderAnyOtherTimeoutAreTheSocketsOwn() throws IOException {
        InputStream in = connect(LONG_LISTEN_MS);
        client.setSoTimeout(50);

        assertThatThrownBy(() -> in.read(new byte[1], 0, 1)).isInstanceOf(SocketTimeoutException.class);
        peer.getOutputStream().write(9);
        peer.getOutputStream().flush();
        client.setSoTimeout(0);
        assertThat(in.read()).isEqualTo(9);
    }

    @Test
    void aListeningTimeBelowAMillisecondIsRefused() {
        assertThatThrownBy(() -> new ListeningSlotSocketFactory("0")).isInstanceOf(IllegalArgumentException.class);
    }
}
