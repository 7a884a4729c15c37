package dev.ordersaga.audit;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The command line. Exactly one scope: {@code --since} (orders created at or after an instant) or {@code --orders}
 * (a file of order ids). The databases hold other runs' orders and the sandboxes' ledgers only this run's, so an
 * unscoped audit would judge orders whose ledger entries are gone.
 */
public record Options(Instant since, Path ordersFile, String pgHost, int pgPort, String pgUser, String pgPassword,
                      String kafka, URI paymentProvider, URI carrier, Path json) {

    public static final String USAGE = """
            usage: deploy/audit.sh (--since <ISO instant> | --orders <file>) [options]

            Audits the saga's invariants over the four databases, the four event topics and the sandboxes' ledgers,
            once the system has gone quiet. Exit status: 0 no violation, 1 violations, 2 usage or connection error.

            scope (exactly one):
              --since <instant>        orders created at or after it, e.g. 2026-01-31T10:15:00Z
              --orders <file>          orders whose ids the file lists, one per line (# comments, blank lines ignored)
            options:
              --pg-host <host>         PostgreSQL host            (default $PG_HOST or 127.0.0.1)
              --pg-port <port>         PostgreSQL port            (default $PG_PORT or 5432)
              --pg-user <user>         a user that reads order_db, inventory_db, payment_db, shipping_db (default postgres)
              --pg-password <pw>       its password               (default postgres)
              --kafka <servers>        Kafka bootstrap servers    (default $KAFKA_BOOTSTRAP_SERVERS or 127.0.0.1:9092)
              --payment-provider <url> the payment provider (sandbox) whose ledger is GET <url>/sandbox/ledger
                                       (default http://127.0.0.1:9101)
              --carrier <url>          the carrier (sandbox)      (default http://127.0.0.1:9102)
              --json <file>            also write the report as JSON to the file
              --help                   this text
            """;

    /** The command line cannot be understood: print the reason and the usage, exit 2. */
    public static final class UsageException extends Exception {
        public UsageException(String message) {
            super(message);
        }
    }

    /** --help was asked for. */
    public static final class HelpRequested extends Exception {
        public HelpRequested() {
            super("help");
        }
    }

    public static Options parse(String[] args, Map<String, String> env) throws UsageException, HelpRequested {
        Instant since = null;
        Path orders = null;
        String pgHost = env.getOrDefault("PG_HOST", "127.0.0.1");
        String pgPortText = env.getOrDefault("PG_PORT", "5432");
        String pgUser = "postgres";
        String pgPassword = "postgres";
        String kafka = env.getOrDefault("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:9092");
        String paymentProvider = "http://127.0.0.1:9101";
        String carrier = "http://127.0.0.1:9102";
        Path json = null;
        List<String> rest = new ArrayList<>(Arrays.asList(args));
        while (!rest.isEmpty()) {
            String option = rest.remove(0);
            if (option.equals("--help") || option.equals("-h")) {
                throw new HelpRequested();
            }
            String name = option;
            String value;
            int eq = option.indexOf('=');
            if (option.startsWith("--") && eq > 0) {
                name = option.substring(0, eq);
                value = option.substring(eq + 1);
            } else {
                if (rest.isEmpty() || !option.startsWith("--")) {
                    throw new UsageException(option.startsWith("--") ? option + " needs a value" : "unexpected argument " + option);
                }
                value = rest.remove(0);
            }
            switch (name) {
                case "--since" -> since = instant(value);
                case "--orders" -> orders = Path.of(value);
                case "--pg-host" -> pgHost = value;
                case "--pg-port" -> pgPortText = value;
                case "--pg-user" -> pgUser = value;
                case "--pg-password" -> pgPassword = value;
                case "--kafka" -> kafka = value;
                case "--payment-provider" -> paymentProvider = value;
                case "--carrier" -> carrier = value;
                case "--json" -> json = Path.of(value);
                default -> throw new UsageException("unknown option " + name);
            }
        }
        if ((since == null) == (orders == null)) {
            throw new UsageException("give the scope: exactly one of --since <instant> and --orders <file>");
        }
        int pgPort;
        try {
            pgPort = Integer.parseInt(pgPortText);
        } catch (NumberFormatException e) {
            throw new UsageException("--pg-port is not a port: " + pgPortText);
        }
        return new Options(since, orders, pgHost, pgPort, pgUser, pgPassword, kafka, url("--payment-provider", paymentProvider),
                url("--carrier", carrier), json);
    }

    private static Instant instant(String text) throws UsageException {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            try {
                return OffsetDateTime.parse(text).toInstant();
            } catch (DateTimeParseException e2) {
                throw new UsageException("--since is not an ISO instant (e.g. 2026-01-31T10:15:00Z): " + text);
            }
        }
    }

    private static URI url(String option, String text) throws UsageException {
        try {
            URI uri = URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
            if (uri.getScheme() == null || uri.getHost() == null
                    || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
            return uri;
        } catch (IllegalArgumentException e) {
            throw new UsageException(option + " is not an http(s) URL: " + text);
        }
    }

    /** The order ids of the --orders file, in their order, each once. */
    public static Set<UUID> readOrderIds(Path file) throws UsageException {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UsageException("cannot read --orders " + file + ": " + e.getMessage());
        }
        Set<UUID> ids = new LinkedHashSet<>();
        int number = 0;
        for (String raw : lines) {
            number++;
            String line = raw.strip();
            int comment = line.indexOf('#');
            if (comment >= 0) {
                line = line.substring(0, comment).strip();
            }
            if (line.isEmpty()) {
                continue;
            }
            try {
                ids.add(UUID.fromString(line));
            } catch (IllegalArgumentException e) {
                throw new UsageException(file + ":" + number + ": not an order id: " + line);
            }
        }
        if (ids.isEmpty()) {
            throw new UsageException("--orders " + file + " lists no order id");
        }
        return ids;
    }
}
