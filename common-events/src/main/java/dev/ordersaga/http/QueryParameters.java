package dev.ordersaga.http;

import jakarta.ws.rs.core.Response;

/**
 * Query parameters read by the resources themselves. Bound as {@code int} or {@code boolean}, JAX-RS answers a value it
 * cannot convert with 404, as if the path were wrong, and takes any text but "true" for false ({@code ?waiting=yes}
 * listed every open order); an operator's typo deserves a 400 that names the parameter.
 */
public final class QueryParameters {

    private QueryParameters() {
    }

    /** A page size: absent is {@code byDefault}, a whole number is held to 1..{@code max}, anything else refused. */
    public static int limit(String value, int byDefault, int max) {
        if (value == null) {
            return byDefault;
        }
        try {
            return Math.max(1, Math.min(Integer.parseInt(value.strip()), max));
        } catch (NumberFormatException e) {
            throw invalid("limit must be a whole number from 1 to " + max + ", not " + value);
        }
    }

    /** A switch: absent is off, "true" or "false" (any case), anything else refused. */
    public static boolean flag(String name, String value) {
        if (value == null || value.equalsIgnoreCase("false")) {
            return false;
        }
        if (value.equalsIgnoreCase("true")) {
            return true;
        }
        throw invalid(name + " must be true or false, not " + value);
    }

    private static ProblemException invalid(String detail) {
        return new ProblemException(Response.Status.BAD_REQUEST, "Invalid parameter", detail);
    }
}
