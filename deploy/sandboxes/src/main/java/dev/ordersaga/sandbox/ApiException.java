package dev.ordersaga.sandbox;

/**
 * An answer other than the happy one, thrown from wherever the sandbox finds out (a missing header, an unknown
 * charge) and turned into a JSON error by {@link SandboxHttpServer}, so that handlers read as the happy path.
 */
final class ApiException extends RuntimeException {

    private final int status;

    ApiException(int status, String message) {
        super(message);
        this.status = status;
    }

    static ApiException badRequest(String message) {
        return new ApiException(400, message);
    }

    static ApiException notFound(String message) {
        return new ApiException(404, message);
    }

    static ApiException conflict(String message) {
        return new ApiException(409, message);
    }

    /** A request the provider read and refuses as it stands, such as a key reused for another request. */
    static ApiException unprocessable(String message) {
        return new ApiException(422, message);
    }

    static ApiException unavailable(String message) {
        return new ApiException(503, message);
    }

    int status() {
        return status;
    }
}
