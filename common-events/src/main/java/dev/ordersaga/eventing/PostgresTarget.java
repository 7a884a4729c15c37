package dev.ordersaga.eventing;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the service's own database is, read from the datasource's JDBC URL so that it is configured once. The URL's
 * parameters ({@code sslmode}, {@code sslrootcert} and the like) hold for the relay's connections too: dropped, the
 * relay would connect with other security than the service's pool, and nothing would say so.
 *
 * @param query the URL's parameters as written (URL-encoded), empty if it has none
 */
record PostgresTarget(String host, int port, String database, String user, String password, String query) {

    /** One host only: Debezium reads the slot of one server, and a list of hosts would hide which one. */
    private static final Pattern JDBC_URL =
            Pattern.compile("jdbc:postgresql://([^:/?,]+)(?::(\\d+))?/([^?]+)(?:\\?(.*))?");

    static PostgresTarget fromJdbcUrl(String url, String user, String password) {
        Matcher m = JDBC_URL.matcher(url);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL of one host: " + url);
        }
        return new PostgresTarget(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)), m.group(3),
                user, password, m.group(4) == null ? "" : m.group(4));
    }

    String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database + (query.isEmpty() ? "" : "?" + query);
    }

    /** The URL's parameters as Debezium passes them to the driver of its own connections ({@code driver.*}). */
    Map<String, String> driverProperties() {
        Map<String, String> properties = new LinkedHashMap<>();
        for (String parameter : query.split("&")) {
            if (parameter.isEmpty()) {
                continue;
            }
            int is = parameter.indexOf('=');
            String name = decode(is < 0 ? parameter : parameter.substring(0, is));
            properties.put("driver." + name, is < 0 ? "" : decode(parameter.substring(is + 1)));
        }
        return Collections.unmodifiableMap(properties);
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
