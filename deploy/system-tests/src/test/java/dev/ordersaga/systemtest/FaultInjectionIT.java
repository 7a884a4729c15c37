package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.systemtest.SagaSystem.Line;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The saga under faults: a mixed load (happy orders, declines, payment timeouts, refunds that fail, undeliverable
 * addresses, customer cancels, every event delivered twice) while each service is killed with SIGKILL and restarted,
 * Kafka and PostgreSQL are restarted, the payment provider slows down, forgets its idempotency keys as soon as it
 * charges (a charge whose answer was lost is made again, the second charge to be refunded), the carrier slows down past
 * shipping's timeout (a create whose answer is lost), forgets its keys likewise (a second parcel, to be cancelled) and
 * goes down until an order waits for an operator. Then the operator sends every
 * waiting order back to the carrier or cancels it, in turns, and once the system has gone quiet the audit must find
 * no violation.
 *
 * <p>Repeatable: {@code -Dsaga.faults.seed=N} fixes the load and the faults' order and timing (the machine's own
 * timing still varies). The small run of the suite places {@code saga.faults.orders} (default 300) orders;
 * {@code deploy/faults.sh} runs a long one. With {@code saga.faults.replicas} above 1 every service runs that many
 * instances, as deployed, and each kill hits one of them: its partitions move to the others mid-stream, a standby
 * takes over its outbox stream if it streamed, and the instances' workers race for the same provider calls.
 */
class FaultInjectionIT {

    /**
     * How long a spell waits for its own order to show its effect. That order goes through the saga while the rounds'
     * other faults fall on it (a killed consumer's partitions held until its session times out, restarts); in a long
     * run one took over 3 minutes to be paid.
     */
    private static final Duration SPELL_BOUND = Duration.ofMinutes(10);

    private static final List<String> SERVICES = List.of("order-service", "inventory-service", "payment-service", "shipping-service");

    // parsed as decimal, and a value that is no number fails the run: Long.getLong would run the default (or read
    // "042" as octal) while faults.sh printed the seed it was given as the one to repeat
    private final long seed = Long.parseLong(System.getProperty("saga.faults.seed", "20261130"));
    private final int orders = Integer.parseInt(System.getProperty("saga.faults.orders", "300"));
    /** Rounds of every fault kind at most; 0: for as long as the load lasts. */
    private final int maxRounds = Integer.getInteger("saga.faults.rounds", 1);
    private final int replicas = replicas();

    @Test
    void invariantsHoldAfterCrashesRestartsAndSlowProviders() throws Exception {
        Random random = new Random(seed);
        Instant startedAt = Instant.now();
        // ends the spells of the faults that last a while (a slow provider, the carrier's outage), so that other faults
        // fall into them
        ScheduledExecutorService spells = Executors.newScheduledThreadPool(6);
        // the providers' reports read every 5 s, not every minute: the charges and parcels a forgetful provider made twice
        // are undone before the audit's patience runs out
        try (SagaSystem saga = SagaSystem.start(runName(), Map.of("eventing.relay.fault.publish-twice", "true",
                "payment.reconciliation.interval", "5s", "payment.reconciliation.min-gap", "5s",
                "shipping.reconciliation.interval", "5s", "shipping.reconciliation.min-gap", "5s"), replicas)) {
            String sku = SagaSystem.newSku();
            saga.stock(sku, orders * 2);
            String scarce = SagaSystem.newSku();
            saga.stock(scarce, Math.max(1, orders / 20));

            List<UUID> placed = Collections.synchronizedList(new ArrayList<>());
            // each order's place in the seeded load: customer, then its turn (an outage's own orders last)
            Map<UUID, String> placedBy = new ConcurrentHashMap<>();
            ExecutorService customers = Executors.newFixedThreadPool(4);
            List<Future<?>> load = new ArrayList<>();
            long seedOfCustomers = random.nextLong();
            // spread the load over the fault plan: about 80 s for the small run, each customer waiting at least 0.5 s
            // between two of its orders
            long pauseMillis = Math.max(500, 4 * 80_000L / Math.max(1, orders) * 2 / 3);
            for (int c = 0; c < 4; c++) {
                Random customer = new Random(seedOfCustomers + c);
                int share = orders / 4 + (c < orders % 4 ? 1 : 0);
                int customerNo = c;
                load.add(customers.submit(() -> {
                    for (int i = 0; i < share; i++) {
                        UUID order = placeOne(saga, customer, sku, scarce);
                        placedBy.put(order, "%d-%06d".formatted(customerNo, i));
                        placed.add(order);
                        TimeUnit.MILLISECONDS.sleep(pauseMillis + customer.nextInt((int) pauseMillis)); // pacing, not a wait
                    }
                    return null;
                }));
            }

            // rounds of every fault kind, each in a new seeded order, while orders come in: one in the suite's small
            // run, as many as its load lasts in a long one (saga.faults.rounds=0)
            int rounds = 0;
            Lasting lasting = new Lasting();
            do {
                rounds++;
                for (Step step : faultPlan(random, replicas, spells, sku, placed, lasting)) {
                    TimeUnit.MILLISECONDS.sleep(step.afterMillis()); // the fault plan's timing, not a wait for a condition
                    System.out.printf("fault (round %d): %s%n", rounds, step.name());
                    step.action().run(saga);
                }
            } while ((maxRounds == 0 || rounds < maxRounds) && !load.stream().allMatch(Future::isDone));
            for (Future<?> f : load) {
                f.get(10, TimeUnit.MINUTES);
            }
            customers.shutdown();
            // the spells still on end as planned: an outage ends once its order waits, not when the load does. Each gives
            // up after SPELL_BOUND from its start, and one that did fails the run just below, saying which
            spells.shutdown();
            assertThat(spells.awaitTermination(SPELL_BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the faults' spells ended")
                    .isTrue();
            for (Future<?> tookEffect : lasting.tookEffect) {
                // each outage held its order for an operator, each slow spell held an answer back, or the run fails here
                tookEffect.get();
            }
            saga.carrierOutage(0);
            saga.carrierSlow(0);
            saga.paymentProviderSlow(0);
            saga.paymentProviderForgetful(false);
            saga.carrierForgetful(false);

            // quiet: every order settled; an operator sends those waiting for the carrier back to it or cancels them,
            // in turns, in the order the seed placed them (the customers' threads added them as they ran), and
            // cancels one that payment held (a charge whose outcome it could not learn: a retry needs the provider's
            // word first)
            int retried = 0;
            int cancelled = 0;
            for (UUID order : placed.stream().sorted(Comparator.comparing(o -> placedBy.getOrDefault(o, "~"))).toList()) {
                JsonNode settled = saga.awaitSettled(order, Duration.ofMinutes(3));
                if (settled.hasNonNull("waitingReason") && !List.of("CONFIRMED", "CANCELLED").contains(settled.path("status").asText())) {
                    if ((retried + cancelled) % 2 == 0 && "SHIPPING".equals(saga.waitingFor(order))) {
                        saga.operatorRetryShipping(order);
                        // CANCELLED if the carrier, back, refuses the parcel (an undeliverable address held by the outage)
                        saga.awaitFinished(order, Duration.ofMinutes(2));
                        retried++;
                    } else {
                        saga.operatorCancel(order);
                        saga.awaitStatus(order, "CANCELLED", Duration.ofMinutes(2));
                        cancelled++;
                    }
                }
            }
            SagaSystem.AuditRun audit = saga.auditOnceQuiet(startedAt, Duration.ofSeconds(120), "seed " + seed);
            System.out.printf("fault injection, seed %d, %d orders, %d replica(s) of each service, %d round(s) of every fault,"
                    + " %d order(s) waited for an operator (%d sent back to the carrier, %d cancelled):%n%s%n",
                    seed, placed.size(), replicas, rounds, retried + cancelled, retried, cancelled, audit.report());
            if (replicas > 1) {
                System.out.print(replicasAtWork(saga));
            }
            // the audit's orders are the run's (a POST retried after a lost answer made none of its own), all settled
            assertThat(audit.report()).contains("orders in scope: " + placed.size() + " (")
                    .contains("waiting for an operator: 0");
            assertThat(retried + cancelled).as("orders that waited for an operator: each outage holds one at least")
                    .isGreaterThanOrEqualTo(rounds);
            assertThat(everyEventCameTwice(audit.report()))
                    .as("every event of the run's orders delivered twice at least (the relays' publish-twice switch)")
                    .isTrue();
        } finally {
            spells.shutdownNow();
        }
    }

    /**
     * Whether each event of the audit's orders came more than once: its distinct events (the records of its orders
     * less the extra copies) are as many as those delivered more than once. Kills and restarts alone make some relay
     * publish a few events again, so a count of duplicates above zero would not show that the switch was on.
     */
    static boolean everyEventCameTwice(String report) {
        Matcher read = Pattern.compile("topics: \\d+ record\\(s\\) read .*?, (\\d+) of orders in scope").matcher(report);
        Matcher twice = Pattern.compile("duplicates on topics \\(info, at-least-once\\): (\\d+) event\\(s\\) delivered "
                + "more than once, (\\d+) extra copies").matcher(report);
        if (!read.find() || !twice.find()) {
            throw new AssertionError("the audit's report has no counts of records and duplicates:\n" + report);
        }
        long distinct = Long.parseLong(read.group(1)) - Long.parseLong(twice.group(2));
        return distinct > 0 && distinct == Long.parseLong(twice.group(1));
    }

    /** Instances of each service; with more than one, a fault kills one of them, drawn from the seed. */
    int replicas() {
        return Integer.getInteger("saga.faults.replicas", 1);
    }

    /** Names the run's processes and their logs. */
    String runName() {
        return "faults";
    }

    /**
     * What the replicas' logs say they went through, each over all its lives: how often one took the outbox stream
     * (at start, after a PostgreSQL restart, or from a killed replica), how often its consumer gave partitions up in
     * a rebalance, and how many lines it wrote for the run's orders (the work it did).
     */
    private String replicasAtWork(SagaSystem saga) throws java.io.IOException {
        StringBuilder report = new StringBuilder("replicas at work (from their logs):\n");
        for (String service : SERVICES) {
            for (int replica = 1; replica <= replicas; replica++) {
                String instance = service + (replica == 1 ? "" : "-" + replica);
                report.append("  %-20s outbox stream taken %d time(s), partitions revoked %d time(s), %d line(s) about the run's orders%n"
                        .formatted(instance, saga.logLines(instance, "CDC relay lock for slot", "acquired"),
                                saga.logLines(instance, "SRMSG18224"), saga.logLines(instance, "[cid=fault-")));
            }
        }
        return report.toString();
    }

    /** One order of a kind drawn from the mix; a customer cancel follows some of them at once. */
    private static UUID placeOne(SagaSystem saga, Random r, String sku, String scarce) throws Exception {
        int kind = r.nextInt(100);
        String token = kind < 55 ? "tok_ok"
                : kind < 65 ? "tok_declined"
                : kind < 73 ? "tok_timeout_succeeds"
                : kind < 80 ? "tok_timeout_declined"
                : kind < 85 ? "tok_refund_fails_twice"
                : "tok_ok";
        String line1 = kind >= 80 && kind < 90 ? "UNDELIVERABLE" : "12 St James Square";
        String item = kind >= 95 ? scarce : sku;
        UUID order = saga.placeRetrying("fault-" + UUID.randomUUID(), token, line1, new Line(item, 1, "10.50"));
        if (r.nextInt(100) < 10) {
            saga.cancelIfStillPossible(order);
        }
        return order;
    }

    private record Step(String name, long afterMillis, Fault action) {
    }

    /**
     * The faults of a run that last a while (a later round's may begin before an earlier one ends): for the slow
     * spells the latest one's number of each kind, since only the latest ends its kind; for the outages how many still
     * wait; and each one's check that it took effect.
     */
    private static final class Lasting {
        /**
         * Outages whose order is not held yet. The carrier stays down until the last of them is: an outage that a later
         * one's end brought to a close early would leave its own order to go through, and its spell to wait in vain.
         */
        private int outagesWaiting;
        final AtomicInteger latestSlowPayment = new AtomicInteger();
        final AtomicInteger latestSlowCarrier = new AtomicInteger();
        final AtomicInteger latestForgetfulPayment = new AtomicInteger();
        final AtomicInteger latestForgetfulCarrier = new AtomicInteger();
        final List<Future<?>> tookEffect = Collections.synchronizedList(new ArrayList<>());
    }

    @FunctionalInterface
    private interface Fault {
        void run(SagaSystem saga) throws Exception;
    }

    /**
     * A spell of {@code seconds} of a sandbox's misbehaviour ({@code begin} returns its count of calls that fell into
     * one so far), with an order of the spell's own, paid with {@code token}, so that a call falls into it even when
     * the load has ended. The spell ends once its time is up and its count grew (at most {@link #SPELL_BOUND}); its
     * check in {@code lasting} fails the run if it did not.
     */
    private static void spell(SagaSystem saga, ScheduledExecutorService spells, AtomicInteger latest, Lasting lasting,
                              int seconds, String sku, List<UUID> placed, String token, String effect, LongSupplier begin,
                              LongSupplier fellInto, Runnable backToNormal) {
        int spell = latest.incrementAndGet();
        long before = begin.getAsLong();
        placed.add(saga.placeRetrying("fault-spell-" + UUID.randomUUID(), token, "12 St James Square",
                new Line(sku, 1, "10.50")));
        lasting.tookEffect.add(spells.schedule(() -> {
            try {
                await(effect).atMost(SPELL_BOUND).pollInterval(Duration.ofMillis(500))
                        .until(() -> fellInto.getAsLong() > before);
            } finally {
                if (latest.get() == spell) {
                    backToNormal.run();
                }
            }
            return null;
        }, seconds, TimeUnit.SECONDS));
    }

    /**
     * Every kind of fault at least once, in a seeded order with seeded gaps. A fault that lasts a while ends on a
     * thread of {@code spells}, so that the faults after it in the plan fall into it.
     */
    private static List<Step> faultPlan(Random r, int replicas, ScheduledExecutorService spells, String sku, List<UUID> placed,
                                        Lasting lasting) {
        List<Step> steps = new ArrayList<>();
        for (String service : SERVICES) {
            if (replicas == 1) {
                // no draw: a seed of a single-instance run replays as it did before replicas existed
                steps.add(new Step("kill -9 and restart " + service, 0, saga -> saga.crashAndRestart(service)));
            } else {
                int replica = r.nextInt(replicas);
                steps.add(new Step("kill -9 and restart " + service + " (replica " + (replica + 1) + " of " + replicas + ")", 0,
                        saga -> saga.crashAndRestart(service, replica)));
            }
        }
        steps.add(new Step("restart Kafka", 0, saga -> saga.restartStack("kafka")));
        steps.add(new Step("restart PostgreSQL", 0, saga -> saga.restartStack("postgres")));
        int paymentSlowSeconds = 5 + r.nextInt(11);
        steps.add(new Step("slow payment provider (1.5 s per answer) for " + paymentSlowSeconds + " s", 0, saga ->
                spell(saga, spells, lasting.latestSlowPayment, lasting, paymentSlowSeconds, sku, placed, "tok_ok",
                        "an answer held back by the spell", () -> saga.paymentProviderSlow(1_500), saga::paymentProviderSlowedAnswers,
                        () -> saga.paymentProviderSlow(0))));
        // above shipping's 2 s timeout: the carrier creates the shipment, its answer is lost, shipping looks it up
        int carrierSlowSeconds = 5 + r.nextInt(11);
        steps.add(new Step("slow carrier (2.5 s per answer, past shipping's timeout) for " + carrierSlowSeconds + " s", 0, saga ->
                spell(saga, spells, lasting.latestSlowCarrier, lasting, carrierSlowSeconds, sku, placed, "tok_ok",
                        "an answer held back by the spell", () -> saga.carrierSlow(2_500), saga::carrierSlowedAnswers, () -> saga.carrierSlow(0))));
        // a provider that keeps keys for less time than a retry takes: a charge whose answer was lost (a timeout) is not
        // found by its key and is made again, and payment refunds the charge it did not keep once the report shows it
        int forgetfulSeconds = 5 + r.nextInt(11);
        steps.add(new Step("payment provider forgets every key as soon as it charges, for " + forgetfulSeconds + " s", 0,
                saga -> spell(saga, spells, lasting.latestForgetfulPayment, lasting, forgetfulSeconds, sku, placed,
                        "tok_timeout_succeeds", "a charge made again under a forgotten key",
                        () -> saga.paymentProviderForgetful(true), saga::paymentProviderChargedUnderForgottenKeys,
                        () -> saga.paymentProviderForgetful(false))));
        // the same at the carrier, whose creates are answered past shipping's timeout meanwhile: shipping keeps one parcel
        // and cancels the others
        int carrierForgetfulSeconds = 5 + r.nextInt(11);
        steps.add(new Step("carrier forgets every key as soon as it creates, answering 2.5 s late, for "
                + carrierForgetfulSeconds + " s", 0,
                saga -> spell(saga, spells, lasting.latestForgetfulCarrier, lasting, carrierForgetfulSeconds, sku, placed,
                        "tok_ok", "a shipment created again under a forgotten key", () -> saga.carrierForgetful(true),
                        saga::carrierCreatedUnderForgottenKeys, () -> saga.carrierForgetful(false))));
        steps.add(new Step("carrier down until an order of its own waits for an operator (at most "
                + SPELL_BOUND.toMinutes() + " min)", 0, saga -> {
            // under the lock, so that an outage that ends cannot switch the carrier back on after this one took it down
            synchronized (lasting) {
                lasting.outagesWaiting++;
                saga.carrierOutage(Integer.MAX_VALUE);
            }
            // an order of the outage's own, so that one is held whenever the outage falls in the load
            UUID held = saga.placeRetrying("fault-outage-" + UUID.randomUUID(), "tok_ok", "12 St James Square",
                    new Line(sku, 1, "10.50"));
            placed.add(held);
            lasting.tookEffect.add(spells.submit(() -> {
                try {
                    await("order " + held + " waits for an operator").atMost(SPELL_BOUND)
                            .pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                            .until(() -> saga.order(held).hasNonNull("waitingReason"));
                } finally {
                    synchronized (lasting) {
                        if (--lasting.outagesWaiting == 0) {
                            saga.carrierOutage(0);
                        }
                    }
                }
                return null;
            }));
        }));
        Collections.shuffle(steps, r);
        List<Step> timed = new ArrayList<>();
        for (Step s : steps) {
            timed.add(new Step(s.name(), 1_000 + r.nextInt(4_000), s.action()));
        }
        return timed;
    }
}
