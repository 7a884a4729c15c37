package dev.ordersaga.eventing;

import javax.net.SocketFactory;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;

/**
 * Sockets for the relay's replication connection on which pgjdbc's check for pending data listens for a while
 * instead of a millisecond.
 *
 * <p>pgjdbc checks a replication stream for pending data with a read under a 1 ms socket timeout, and on a
 * replication connection it sets no delay between such checks. Debezium makes five of them and then sleeps its poll
 * interval, deaf to the slot. So the relay could either sleep briefly, and pay for it in CPU: each empty check parks
 * in poll(2) for a millisecond and ends in a {@code SocketTimeoutException} whose stack trace the JVM fills in, and
 * each poll interval ends with Debezium's queue spinning through its last millisecond (in the benchmark's profiles
 * most of an idle relay, and up to a twelfth of a service under load). Or it could sleep long, and every event
 * committed meanwhile waited out the rest of the sleep, on each of a saga's hops.
 *
 * <p>Here a check that finds nothing buffered waits up to the listening time for data, and returns as soon as a byte
 * arrives: the relay hears a commit at once for all but the poll interval in every five listening times (with the
 * defaults, 50 ms in 1050), and an idle relay wakes a few times a second. A closed peer ends the wait, as a read
 * sees the end of the stream. pgjdbc instantiates the factory by class name ({@code socketFactory}), with the
 * listening time in milliseconds as its argument ({@code socketFactoryArg}); the relay hands both through
 * Debezium's {@code driver.} pass-through. Only reads under pgjdbc's 1 ms timeout behave differently.
 */
public class ListeningSlotSocketFactory extends SocketFactory {

    /** The timeout pgjdbc sets only for its check for pending data ({@code PGStream.hasMessagePending}). */
    static final int PENDING_CHECK_TIMEOUT_MS = 1;

    private final int listenMillis;

    /** @param listenMillis how long a check for pending data waits for it, in milliseconds */
    public ListeningSlotSocketFactory(String listenMillis) {
        this.listenMillis = Integer.parseInt(listenMillis.trim());
        if (this.listenMillis < PENDING_CHECK_TIMEOUT_MS) {
            throw new IllegalArgumentException("listening time must be at least 1 ms: " + listenMillis);
        }
    }

    @Override
    public Socket createSocket() {
        return new ListeningSocket(listenMillis);
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connected(new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return connected(new InetSocketAddress(address, port), new InetSocketAddress(localAddress, localPort));
    }

    private Socket connected(InetSocketAddress remote, InetSocketAddress local) throws IOException {
        Socket socket = createSocket();
        if (local != null) {
            socket.bind(local);
        }
        socket.connect(remote);
        return socket;
    }

    static final class ListeningSocket extends Socket {

        private final int listenMillis;
        private volatile int timeout;
        private InputStream input;

        ListeningSocket(int listenMillis) {
            this.listenMillis = listenMillis;
        }

        @Override
        public void setSoTimeout(int timeout) throws SocketException {
            super.setSoTimeout(timeout);
            this.timeout = timeout;
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (input == null) {
                input = new ListeningInput(super.getInputStream(), this);
            }
            return input;
        }

        boolean checkingForPending() {
            return timeout == PENDING_CHECK_TIMEOUT_MS;
        }

        void listen() throws SocketException {
            super.setSoTimeout(listenMillis);
        }

        /** Back to pgjdbc's own timeout, which it restores itself once the check is over. */
        void stopListening() throws SocketException {
            super.setSoTimeout(PENDING_CHECK_TIMEOUT_MS);
        }
    }

    private static final class ListeningInput extends FilterInputStream {

        private final ListeningSocket socket;

        ListeningInput(InputStream in, ListeningSocket socket) {
            super(in);
            this.socket = socket;
        }

        @Override
        public int read() throws IOException {
            if (!socket.checkingForPending()) {
                return in.read();
            }
            socket.listen();
            try {
                return in.read();
            } finally {
                socket.stopListening();
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (!socket.checkingForPending()) {
                return in.read(b, off, len);
            }
            socket.listen();
            try {
                return in.read(b, off, len);
            } finally {
                socket.stopListening();
            }
        }
    }
}
