package dev.ordersaga.sandbox;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * A provider's report of what it did (the payment provider's settlements, the carrier's shipments), in the order it
 * did it, read a page at a time. The first page starts at {@code since} (an ISO-8601 instant); each page names where
 * the next one starts ({@code next}, an opaque cursor to pass back as {@code cursor}), so that a reader that keeps it
 * misses nothing and reads nothing twice. A cursor of an earlier run of the sandbox, whose books are gone, reads this
 * run's report from its start. Its ledger's lock guards it.
 *
 * @param <T> what an entry records
 */
final class Report<T> {

    private record Entry<T>(T value, Instant at) {
    }

    private final List<Entry<T>> entries = new ArrayList<>();
    /** Names this run of the sandbox in its cursors. */
    private final String run = Ids.random();

    void add(T value) {
        entries.add(new Entry<>(value, Instant.now()));
    }

    /**
     * The page a read asks for ({@code cursor} or {@code since}, and {@code limit}, 1 to 1000, default 100), as the
     * answer's body: the entries under {@code field}, each {@code view}ed with when it happened.
     */
    Map<String, Object> page(Request request, String field, BiFunction<T, Instant, Map<String, Object>> view) {
        int limit = request.queryParam("limit").map(l -> number(l, "limit")).orElse(100);
        if (limit < 1 || limit > 1000) {
            throw ApiException.badRequest("limit must be 1 to 1000: " + limit);
        }
        int from = request.queryParam("cursor").map(this::position)
                .orElseGet(() -> position(request.queryParam("since").map(Report::instant)
                        .orElseThrow(() -> ApiException.badRequest("either cursor or since is required"))));
        int start = Math.min(Math.max(from, 0), entries.size());
        int end = Math.min(start + limit, entries.size());
        Map<String, Object> page = new LinkedHashMap<>();
        page.put(field, entries.subList(start, end).stream().map(entry -> view.apply(entry.value(), entry.at())).toList());
        page.put("next", run + "." + end);
        page.put("hasMore", end < entries.size());
        return page;
    }

    /**
     * The position a cursor names: {@code <run>.<position>}. Any other cursor is from before this run (whose books
     * are gone), and all of this run is news to its reader: it reads from the start.
     */
    private int position(String cursor) {
        int dot = cursor.lastIndexOf('.');
        if (dot < 0 || !cursor.substring(0, dot).equals(run)) {
            return 0;
        }
        return number(cursor.substring(dot + 1), "cursor");
    }

    /** The position of the first entry at or after {@code since}. */
    private int position(Instant since) {
        int position = entries.size();
        while (position > 0 && !entries.get(position - 1).at().isBefore(since)) {
            position--;
        }
        return position;
    }

    private static int number(String text, String name) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " is not a number: " + text);
        }
    }

    private static Instant instant(String text) {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw ApiException.badRequest("since is not an ISO-8601 instant: " + text);
        }
    }
}
