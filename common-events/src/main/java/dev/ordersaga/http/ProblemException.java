package dev.ordersaga.http;

import jakarta.ws.rs.core.Response;

/** An error the client can act on, answered as RFC 9457 problem+json. */
public class ProblemException extends RuntimeException {

    private final Response.Status status;
    private final String title;

    public ProblemException(Response.Status status, String title, String detail) {
        super(detail);
        this.status = status;
        this.title = title;
    }

    public Response.Status status() {
        return status;
    }

    public String title() {
        return title;
    }
}
