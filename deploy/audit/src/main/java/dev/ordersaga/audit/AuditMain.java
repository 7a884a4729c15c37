package dev.ordersaga.audit;

import dev.ordersaga.audit.load.Databases;
import dev.ordersaga.audit.load.EventTopics;
import dev.ordersaga.audit.load.Ledgers;
import dev.ordersaga.audit.load.LoadException;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * {@code java -jar audit.jar (--since <instant> | --orders <file>) [options]}: loads a {@link Snapshot} (databases,
 * then ledgers, then topics), runs the {@link Checks}, prints the {@link Report}. Exit 0 without a violation, 1 with
 * any, 2 on a usage or connection error.
 */
public final class AuditMain {

    public static final int OK = 0;
    public static final int VIOLATIONS = 1;
    public static final int ERROR = 2;

    private AuditMain() {
    }

    public static void main(String[] args) {
        // kafka-clients logs through SLF4J (slf4j-simple): its errors only, on stderr
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.exit(run(args, System.getenv(), System.out, System.err));
    }

    static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        Options options;
        Set<UUID> orderIds = null;
        try {
            options = Options.parse(args, env);
            if (options.ordersFile() != null) {
                orderIds = Options.readOrderIds(options.ordersFile());
            }
        } catch (Options.HelpRequested e) {
            out.print(Options.USAGE);
            return OK;
        } catch (Options.UsageException e) {
            err.println("audit: " + e.getMessage());
            err.print(Options.USAGE);
            return ERROR;
        }
        Snapshot snapshot;
        try {
            snapshot = load(options, orderIds, err);
        } catch (LoadException e) {
            err.println("audit: " + e.getMessage());
            return ERROR;
        }
        return report(Checks.run(snapshot), options.json(), out, err);
    }

    /**
     * Prints the report, writes its JSON if asked, and says how the audit ended. Violations found are exit 1 even
     * when the JSON could not be written: that error must not pass for a failure to look.
     */
    static int report(AuditResult result, Path json, PrintStream out, PrintStream err) {
        out.print(Report.text(result));
        if (json != null) {
            try {
                Path parent = json.toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                Files.writeString(json, Report.json(result));
            } catch (IOException e) {
                err.println("audit: cannot write the JSON report to " + json + ": " + e.getMessage());
                return result.clean() ? ERROR : VIOLATIONS;
            }
        }
        return result.clean() ? OK : VIOLATIONS;
    }

    private static Snapshot load(Options options, Set<UUID> orderIds, PrintStream err) {
        String scope = options.since() != null
                ? "orders created at or after " + options.since()
                : "the " + orderIds.size() + " order(s) listed in " + options.ordersFile();
        err.println("audit: reading the databases at " + options.pgHost() + ":" + options.pgPort() + " (" + scope + ")");
        Databases databases = new Databases(options.pgHost(), options.pgPort(), options.pgUser(), options.pgPassword());
        Databases.Rows rows = databases.load(options.since(), orderIds);
        Set<UUID> inScope = rows.orders().stream().map(Snapshot.Order::id).collect(Collectors.toCollection(LinkedHashSet::new));
        Set<String> references = inScope.stream().map(UUID::toString).collect(Collectors.toSet());

        err.println("audit: reading the ledgers of " + options.paymentProvider() + " and " + options.carrier());
        Ledgers ledgers = new Ledgers();
        Ledgers.PaymentLedger payments = ledgers.paymentLedger(options.paymentProvider(), references);
        Ledgers.CarrierLedger carrier = ledgers.carrierLedger(options.carrier(), references);
        List<Snapshot.UnmatchedEntry> unmatched = new ArrayList<>(payments.unmatched());
        unmatched.addAll(carrier.unmatched());
        Set<UUID> named = new HashSet<>();
        unmatched.forEach(e -> Checks.orderId(e.reference()).ifPresent(named::add));
        Set<UUID> existing = databases.existingOrders(named);
        unmatched.replaceAll(e -> e.withOrderExists(Checks.orderId(e.reference()).filter(existing::contains).isPresent()));

        err.println("audit: reading the event topics at " + options.kafka());
        EventTopics.Read topics = new EventTopics(options.kafka()).read(inScope);

        return new Snapshot(scope, options.since(), rows.orders(), rows.ordersNotFound(), rows.timeline(),
                rows.handConfirmed(), rows.reservations(), rows.sightings(), rows.stock(), rows.payments(),
                rows.shipments(), rows.surpluses(), payments.charges(), payments.refunds(), carrier.shipments(),
                unmatched, topics.events(), topics.parked(), topics.stats());
    }
}
