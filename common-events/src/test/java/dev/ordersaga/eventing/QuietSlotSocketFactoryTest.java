package dev.ordersaga.eventing;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class QuietSlotSocketFactoryTest {

    private ServerSocket server;
    private Socket client;
    private Socket peer;

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void close() throws IOException {
        for (AutoCloseable c : new AutoCloseable[]{client, peer, server}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // the test closed it already
            }
        }
    }

    private InputStream connect(QuietSlotSocketFactory factory) throws IOException {
        client = factory.createSocket(server.getInetAddress(), server.getLocalPort());
        peer = server.accept();
        return client.getInputStream();
    }

    @Test
    void aCheckForPendingDataWithNothingBufferedFailsAtOnceWithoutAStackTrace() throws IOException {
        InputStream in = connect(new QuietSlotSocketFactory(TimeUnit.HOURS.toNanos(1)));
        client.setSoTimeout(QuietSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);
        // the first check reads for real: a 1 ms timed read, as pgjdbc's own
        assertThatThrownBy(() -> in.read(new byte[1], 0, 1))
                .isInstanceOf(SocketTimeoutException.class)
                .isNotInstanceOf(QuietSlotSocketFactory.NothingPending.class);
        // every further check within the hour is answered from the kernel's count of buffered bytes
        for (int i = 0; i < 1000; i++) {
            assertThatThrownBy(() -> in.read(new byte[1], 0, 1))
                    .isInstanceOf(QuietSlotSocketFactory.NothingPending.class)
                    .satisfies(e -> assertThat(e.getStackTrace()).isEmpty());
        }
    }

    @Test
    void aCheckForPendingDataReadsWhatIsBuffered() throws IOException {
        InputStream in = connect(new QuietSlotSocketFactory(TimeUnit.HOURS.toNanos(1)));
        client.setSoTimeout(QuietSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);
        peer.getOutputStream().write(new byte[]{7, 8});
        peer.getOutputStream().flush();
        awaitBuffered(in, 2);

        byte[] read = new byte[2];
        assertThat(in.read(read, 0, 2)).isEqualTo(2);
        assertThat(read).containsExactly(7, 8);
    }

    @Test
    void aClosedPeerIsSeenByTheRealReadThatComesAtLeastOnceAnInterval() throws IOException {
        InputStream in = connect(new QuietSlotSocketFactory(0));
        client.setSoTimeout(QuietSlotSocketFactory.PENDING_CHECK_TIMEOUT_MS);
        peer.close();

        assertThat(in.read(new byte[1], 0, 1)).isEqualTo(-1);
    }

    @Test
    void readsUnderAnyOtherTimeoutAreTheSocketsOwn() throws IOException {
        InputStream in = connect(new QuietSlotSocketFactory(TimeUnit.HOURS.toNanos(1)));
        client.setSoTimeout(50);

        assertThatThrownBy(() -> in.read(new byte[1], 0, 1))
                .isInstanceOf(SocketTimeoutException.class)
                .isNotInstanceOf(QuietSlotSocketFactory.NothingPending.class);
        peer.getOutputStream().write(9);
        peer.getOutputStream().flush();
        client.setSoTimeout(0);
        assertThat(in.read()).isEqualTo(9);
    }

    private static void awaitBuffered(InputStream in, int bytes) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (in.available() < bytes) {
            assertThat(System.nanoTime()).as("bytes buffered within 5 s").isLessThan(deadline);
            Thread.onSpinWait();
        }
    }
}
