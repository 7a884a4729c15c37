package dev.ordersaga.systemtest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** What the tests' second servers (SecuredKafka, SecuredPostgres) share: their ports on the loopback, their directory. */
final class ScratchServer {

    static final String HOST = "127.0.0.1";

    private ScratchServer() {
    }

    /** Whether something listens on the loopback port: a server left over from another run would answer for ours. */
    static boolean answers(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Deletes the server's directory and all in it. */
    static void delete(Path home) {
        try (Stream<Path> files = Files.walk(home)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
