package dev.ordersaga.eventing;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Where the service's own database is, read from the datasource's JDBC URL so that it is configured once. */
record PostgresTarget(String host, int port, String database, String user, String password) {

    private static final Pattern JDBC_URL = Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?/([^?]+).*");

    static PostgresTarget fromJdbcUrl(String url, String user, String password) {
        Matcher m = JDBC_URL.matcher(url);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL: " + url);
        }
        return new PostgresTarget(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)), m.group(3), user, password);
    }

    String jdbcUrl() {
        return "jdbc:postgresql://" + host + ":" + port + "/" + database;
    }
}
