package dev.ordersaga.http;

import jakarta.ws.rs.core.Response;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.UUID;

/**
 * Query parameters read by the resources themselves. Bound as {@code int} or {@code boolean}, JAX-RS answers a value it
 * cannot convert with 404, as if the path were wrong, and takes any text but "true" for false ({@code ?waiting=yes}
 * listed every open order); an operator's typo deserves a 400 that names the parameter.
 */
public final class QueryParameters {

    private static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");
    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999Z");

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

    /**
     * An instant (ISO-8601, such as 2026-12-02T14:00:00Z): absent is {@code byDefault}. Years 1 to 9999 only: Instant
     * takes far more than PostgreSQL's timestamptz, which would refuse the query itself.
     */
    public static Instant instant(String name, String value, Instant byDefault) {
        if (value == null) {
            return byDefault;
        }
        Instant instant;
        try {
            instant = Instant.parse(value);
        } catch (DateTimeParseException e) {
            instant = null;
        }
        if (instant == null || instant.isBefore(EARLIEST) || instant.isAfter(LATEST)) {
            throw invalid(name + " must be an instant between the years 1 and 9999 such as 2026-12-02T14:00:00Z, not " + value);
        }
        return instant;
    }

    /** An id: absent is null. */
    public static UUID uuid(String name, String value) {
        if (value == null) {
            return null;
        }
        try {
            return UUID.fromString(value);
        } catch (IllegalArgumentException e) {
            throw invalid(name + " must be an id such as 0195f1c2-7b3e-7f00-8a00-000000000000, not " + value);
        }
    }

    /** A position such as a Kafka offset, 0 or more: absent is null. */
    public static Long position(String name, String value) {
        if (value == null) {
            return null;
        }
        try {
            long position = Long.parseLong(value.strip());
            if (position >= 0) {
                return position;
            }
        } catch (NumberFormatException e) {
            // refused below, as a negative one is
        }
        throw invalid(name + " must be a whole number, 0 or more, not " + value);
    }

    /** A 400 naming what is wrong with the query's parameters: also for one that means nothing with the others. */
    public static ProblemException invalid(String detail) {
        return new ProblemException(Response.Status.BAD_REQUEST, "Invalid parameter", detail);
    }
}
