package dev.ordersaga.http;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.List;

/** RFC 9457 problem details. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, List<Violation> violations) {

    public static final String MEDIA_TYPE = "application/problem+json";

    public record Violation(String field, String message) {
    }
}
