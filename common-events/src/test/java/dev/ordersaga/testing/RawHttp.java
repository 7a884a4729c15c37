package dev.ordersaga.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A request sent over a plain socket, as written: HTTP clients may leave out a header without a value (RestAssured's
 * does), and a service must see such a header as it came.
 */
public final class RawHttp {

    private RawHttp() {
    }

    /**
     * @param requestLine e.g. {@code PUT /stock/x}
     * @param headers     header lines, each ending in CRLF; Host, Content-Length and Connection are added
     * @return the whole answer, its status line first
     */
    public static String exchange(int port, String requestLine, String headers, byte[] body) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            String head = requestLine + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "Content-Length: " + body.length
                    + "\r\nConnection: close\r\n\r\n";
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
