package dev.ordersaga.eventing;

import javax.net.SocketFactory;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

/**
 * Sockets for the relay's replication connection that answer pgjdbc's "is anything pending?" from the kernel's
 * count of buffered bytes instead of a timed read.
 *
 * <p>pgjdbc checks a replication stream for pending data with a read under a 1 ms socket timeout, and on a
 * replication connection it sets no delay between such checks. Debezium makes five of them before each
 * poll-interval sleep. Each that finds nothing parks the thread in poll(2) for a millisecond and ends in a
 * {@link SocketTimeoutException} whose stack trace the JVM fills in: in the benchmark's profiles that was up to a
 * twelfth of a service's CPU under load and most of an idle relay's besides Debezium's queue. Here such a check
 * costs one ioctl: with nothing buffered it fails at once with a timeout that carries no stack trace, and pgjdbc
 * takes it for "nothing pending", as it does today.
 *
 * <p>A peer that closed the connection leaves nothing buffered too, and only a read sees the end of the stream.
 * So at least once a second a check reads for real, as pgjdbc does on other connections. pgjdbc instantiates the
 * factory by class name ({@code socketFactory}), which the relay hands it through Debezium's {@code driver.}
 * pass-through. Only reads under pgjdbc's 1 ms timeout behave differently; every other read is the socket's own.
 */
public class QuietSlotSocketFactory extends SocketFactory {

    /** The timeout pgjdbc sets only for its check for pending data ({@code PGStream.hasMessagePending}). */
    static final int PENDING_CHECK_TIMEOUT_MS = 1;

    private final long realReadEveryNanos;

    public QuietSlotSocketFactory() {
        this(TimeUnit.SECONDS.toNanos(1));
    }

    QuietSlotSocketFactory(long realReadEveryNanos) {
        this.realReadEveryNanos = realReadEveryNanos;
    }

    @Override
    public Socket createSocket() {
        return new QuietSlotSocket(realReadEveryNanos);
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        Socket socket = createSocket();
        socket.bind(new InetSocketAddress(localHost, localPort));
        socket.connect(new InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        Socket socket = createSocket();
        socket.bind(new InetSocketAddress(localAddress, localPort));
        socket.connect(new InetSocketAddress(address, port));
        return socket;
    }

    private Socket connected(InetSocketAddress address) throws IOException {
        Socket socket = createSocket();
        socket.connect(address);
        return socket;
    }

    static final class QuietSlotSocket extends Socket {

        private final long realReadEveryNanos;
        private volatile int timeout;
        private InputStream input;

        QuietSlotSocket(long realReadEveryNanos) {
            this.realReadEveryNanos = realReadEveryNanos;
        }

        @Override
        public void setSoTimeout(int timeout) throws SocketException {
            super.setSoTimeout(timeout);
            this.timeout = timeout;
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (input == null) {
                input = new QuietInput(super.getInputStream(), this);
            }
            return input;
        }

        boolean checkingForPending() {
            return timeout == PENDING_CHECK_TIMEOUT_MS;
        }
    }

    private static final class QuietInput extends FilterInputStream {

        private final QuietSlotSocket socket;
        private long nextRealRead = System.nanoTime();

        QuietInput(InputStream in, QuietSlotSocket socket) {
            super(in);
            this.socket = socket;
        }

        @Override
        public int read() throws IOException {
            answerIfNothingPending();
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            answerIfNothingPending();
            return in.read(b, off, len);
        }

        private void answerIfNothingPending() throws IOException {
            if (!socket.checkingForPending()) {
                return;
            }
            long now = System.nanoTime();
            if (now - nextRealRead < 0 && in.available() == 0) {
                throw new NothingPending();
            }
            nextRealRead = now + socket.realReadEveryNanos;
        }
    }

    /** What pgjdbc's timed read would have thrown, without the stack trace nobody reads. */
    static final class NothingPending extends SocketTimeoutException {

        NothingPending() {
            super("nothing pending on the replication stream");
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
