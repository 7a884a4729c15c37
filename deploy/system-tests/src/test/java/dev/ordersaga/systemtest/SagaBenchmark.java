package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.ordersaga.testing.TestStack;
import org.awaitility.core.ConditionTimeoutException;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.awaitility.Awaitility.await;

/**
 * The saga benchmark: saturation throughput, POST → CONFIRMED latency at a fixed open-loop rate, commit → consumer
 * latency, database commits and CPU seconds per saga, peak memory of every process, and the physical limit of the
 * same PostgreSQL (pgbench running one saga step's transaction shape) — all measured in one run on one machine.
 */
final class SagaBenchmark {

    /**
     * @param warmupOrders    the most orders the warm-up sends
     * @param warmupRound     the warm-up sends its orders in rounds of this many, and ends after the first round in
     *                        which the JIT compilers of the stack took less than {@code warmupQuietCores}
     * @param warmupQuietCores the JIT's share of the machine (in cores) below which the stack counts as warmed up
     * @param openLoopWarmupSeconds the open loop runs unmeasured at its rate in slices of this many seconds, and is
     *                        measured after the first slice in which the JIT took less than {@code warmupQuietCores}
     * @param openLoopWarmupMaxSeconds or after this many seconds unmeasured in all
     * @param requireDurable  refuse to run on a PostgreSQL whose commits are not on disk when they return
     */
    record Settings(int warmupOrders, int warmupRound, double warmupQuietCores, int saturationOrders, int concurrency,
                    double openLoopRate, int openLoopWarmupSeconds, int openLoopWarmupMaxSeconds, int openLoopSeconds,
                    int pgbenchSeconds, boolean requireDurable, Path outDir) {
    }

    /**
     * How a warm-up ended: the load it sent (orders, or seconds of the open loop), in how many steps, and the JIT's
     * share of the machine in the last.
     */
    private record Warmup(int sent, int steps, double lastStepJitCores, boolean quiet) {
    }

    /**
     * pgbench's step transactions a second, and the machine's CPU each took: everything busy while it ran, less what
     * the idle stack's services, Kafka and sandboxes took meanwhile (PostgreSQL's own processes and pgbench stay in).
     */
    private record Pgbench(double tps, double cpuMillisPerStep, Map<String, Double> idleStackCores) {
    }

    /** The measured open loop's first seconds, whose orders' latencies are not counted (see {@link #run}). */
    private static final int OPEN_LOOP_LEAD_IN_SECONDS = 10;
    /** The key under which {@link #cpuTicks()} counts PostgreSQL's ended processes. */
    static final String ENDED = "postgres#ended";
    private static final String ENDED_KIND = "processes that ended during the phase";
    private static final List<String> DATABASES = List.of("order_db", "inventory_db", "payment_db", "shipping_db");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final SagaSystem saga;
    private final Settings settings;
    private final String sku = SagaSystem.newSku();
    /** Transactions of the benchmark's own in the services' databases: its looks for confirmed orders. */
    private final AtomicLong ownCommits = new AtomicLong();
    /** What each PostgreSQL process seen does, by its process title ({@link #postgresKind}). */
    private final Map<Long, String> postgresKinds = new java.util.concurrent.ConcurrentHashMap<>();
    /** POSTs answered 503 (no database connection free in time) and sent again. */
    private final AtomicLong busyAnswers = new AtomicLong();
    /** The most PostgreSQL's processes held resident at once, of the readings taken ({@link #samplePostgresMemory}). */
    private final AtomicLong postgresPeakKb = new AtomicLong();

    SagaBenchmark(SagaSystem saga, Settings settings) {
        this.saga = saga;
        this.settings = settings;
    }

    Map<String, Object> run() throws Exception {
        if (settings.requireDurable() && !durable()) {
            throw new IllegalStateException("PostgreSQL is not durable (fsync, full_page_writes, synchronous_commit): "
                    + "its figures would not be the benchmark's; deploy/bench.sh starts it durable");
        }
        long unfinishedAtStart = unfinishedOrders();
        ScheduledExecutorService memory = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "postgres-memory");
            thread.setDaemon(true);
            return thread;
        });
        memory.scheduleWithFixedDelay(this::samplePostgresMemory, 0, 2, TimeUnit.SECONDS);
        try {
            return measure(unfinishedAtStart, memory);
        } finally {
            memory.shutdownNow();
        }
    }

    private Map<String, Object> measure(long unfinishedAtStart, ScheduledExecutorService memory) throws Exception {
        saga.stock(sku, 10_000_000);
        Map<String, Long> jitBeforeWarmup = compilerTicks();
        Warmup warmup = warmUp();
        long busyInWarmup = busyAnswers.get();
        Map<String, Long> jitBeforeSaturation = compilerTicks();

        // read before any figure's first reading: it opens a session, whose work no window may count
        long saturationMark = timelineMark();
        long commitsBefore = commits();
        long[] walBefore = wal();
        Map<String, long[]> rowsBefore = tableActivity();
        boolean statementsCounted = resetStatementCounts();
        Map<String, Long> cpuBefore = cpuTicks();
        MachineTicks machineBefore = MachineTicks.read();
        Instant t0 = Instant.now();
        List<Sent> saturation = sendClosedLoop(settings.saturationOrders());
        Map<UUID, Instant> saturationConfirmed = confirmAll(saturation, saturationMark, Duration.ofMinutes(10));
        // to the last confirmation, not to the look that found it (up to a poll interval and a query later)
        Instant lastConfirmed = saturationConfirmed.values().stream().max(Instant::compareTo).orElseThrow();
        double seconds = Duration.between(t0, lastConfirmed).toNanos() / 1e9;
        double throughput = saturation.size() / seconds;
        // progress, for a person watching (and a profiler waiting for a phase): the figures come in the summary
        System.out.printf("saturation: %d orders confirmed in %.1f s%n", saturation.size(), seconds);
        long busyInSaturation = busyAnswers.get() - busyInWarmup;
        long commitsPerSagaTotal = commits() - commitsBefore;
        Map<String, Double> walPerSaga = walPerSaga(walBefore, wal(), saturation.size());
        Map<String, Long> cpuAfter = cpuTicks();
        Map<String, Long> jitAfterSaturation = compilerTicks();
        MachineTicks machineAfter = MachineTicks.read();
        // counted at once (pg_stat_statements is current), before the settling below lets the services' idle work in
        Map<String, Object> statementsPerSaga = statementsCounted
                ? statementsPerSaga(saturation.size())
                : Map.of("unavailable", "pg_stat_statements is not loaded (deploy/stack.sh up loads it)");
        Map<String, Map<String, Double>> rowsPerSaga = perSaga(rowsBefore, settledTableActivity(rowsBefore), saturation.size());
        Map<String, Double> cpuByProcess = cpuSecondsByProcess(cpuBefore, cpuAfter);
        Map<String, Double> postgresCpu = postgresCpuByKind(cpuBefore, cpuAfter, saturation.size());
        double cpuSeconds = cpuByProcess.values().stream().mapToDouble(Double::doubleValue).sum();
        Map<String, Double> saturationMachine = machineLoad(machineBefore, machineAfter, cpuSeconds);

        // the same figures for the open loop: there a poll carries about one event, so every cost paid per poll,
        // transaction and publish is paid per event; these say how much that costs against saturation's batches
        double rate = settings.openLoopRate() > 0 ? settings.openLoopRate() : Math.max(1, throughput / 2);
        Warmup openWarmup = warmUpOpenLoop(rate);
        // each warm-up slice is waited out to its last confirmation, so the measured loop would start with no queue:
        // its first seconds run unmeasured, and its orders' latencies count only once the queues are what the rate
        // makes them (its CPU and commits count whole, a saga being a saga)
        int leadIn = Math.min(OPEN_LOOP_LEAD_IN_SECONDS, settings.openLoopSeconds());
        System.out.printf("open loop: %.1f orders/s, %d s measured after %d s%n", rate, settings.openLoopSeconds(),
                leadIn);
        long openMark = timelineMark();
        long openCommitsBefore = commits();
        long[] openWalBefore = wal();
        Map<String, Long> openCpuBefore = cpuTicks();
        Map<String, Long> jitBeforeOpen = compilerTicks();
        MachineTicks openMachineBefore = MachineTicks.read();
        long o0 = System.nanoTime();
        long busyBeforeOpen = busyAnswers.get();
        List<Sent> open = sendOpenLoop(rate, leadIn + settings.openLoopSeconds());
        long busyInOpen = busyAnswers.get() - busyBeforeOpen;
        Map<UUID, Instant> confirmedAt = confirmAll(open, openMark, Duration.ofMinutes(10));
        double openSeconds = (System.nanoTime() - o0) / 1e9;
        Map<String, Long> openCpuAfter = cpuTicks();
        Map<String, Double> openCpuByProcess = cpuSecondsByProcess(openCpuBefore, openCpuAfter);
        double openCpuSeconds = openCpuByProcess.values().stream().mapToDouble(Double::doubleValue).sum();
        Map<String, Long> jitAfterOpen = compilerTicks();
        Map<String, Double> openMachine = machineLoad(openMachineBefore, MachineTicks.read(), openCpuSeconds);
        long openCommits = commits() - openCommitsBefore;
        Map<String, Double> openWalPerSaga = walPerSaga(openWalBefore, wal(), open.size());
        Instant measuredFrom = open.get(0).sentAt().plusSeconds(leadIn);
        List<Sent> measured = open.stream().filter(s -> !s.sentAt().isBefore(measuredFrom)).toList();
        List<Double> latencies = new ArrayList<>();
        for (Sent s : measured) {
            latencies.add(Duration.between(s.sentAt(), confirmedAt.get(s.orderId())).toNanos() / 1e6);
        }
        List<Double> relayLatencies = commitToConsumer(measured);

        double commitsPerSaga = (double) commitsPerSagaTotal / saturation.size();
        // the saga's memory, not pgbench's sessions: no reading may still be under way when it starts
        memory.shutdownNow();
        if (!memory.awaitTermination(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("PostgreSQL's memory readings did not stop");
        }
        samplePostgresMemory();
        Pgbench pgbench = pgbench();
        double limit = pgbench.tps() / commitsPerSaga;
        // at saturation the machine is busy, so throughput goes with 1 / (a saga's CPU): with the services' CPU taken
        // out of it, the ratio says how far any code of the services could take it on this machine, all else the same
        double sagaCpuMillis = (machineAfter.busy() - machineBefore.busy()) * 10.0 / saturation.size();
        double servicesCpuMillis = cpuByProcess.entrySet().stream().filter(e -> e.getKey().endsWith("-service"))
                .mapToDouble(Map.Entry::getValue).sum() * 1000 / saturation.size();
        double stepsCpuMillis = pgbench.cpuMillisPerStep() * commitsPerSaga;

        Map<String, Object> r = new LinkedHashMap<>();
        r.put("machine", Map.of("cores", Runtime.getRuntime().availableProcessors(), "memoryGiB", memoryGiB(),
                "note", "PostgreSQL, Kafka, the four services and the sandboxes on this one machine"));
        r.put("postgresDurable", durable());
        r.put("unfinishedOrdersAtStart", unfinishedAtStart);
        r.put("services", Map.of("jvmOptions", System.getProperty("saga.service.jvm-options", ""),
                "warmupOrders", warmup.sent(), "warmupRounds", warmup.steps(),
                "warmupLastRoundJitCores", round(warmup.lastStepJitCores()), "warmupEndedQuiet", warmup.quiet()));
        r.put("saturation", Map.of("orders", saturation.size(), "concurrency", settings.concurrency(),
                "seconds", round(seconds), "confirmedSagasPerSecond", round(throughput)));
        r.put("openLoop", Map.ofEntries(Map.entry("ratePerSecond", round(rate)),
                Map.entry("warmupSeconds", openWarmup.sent()), Map.entry("warmupSlices", openWarmup.steps()),
                Map.entry("warmupLastSliceJitCores", round(openWarmup.lastStepJitCores())),
                Map.entry("warmupEndedQuiet", openWarmup.quiet()),
                Map.entry("leadInSeconds", leadIn), Map.entry("seconds", settings.openLoopSeconds()),
                Map.entry("orders", open.size()), Map.entry("ordersMeasured", measured.size()),
                Map.entry("postToConfirmedMillis", percentiles(latencies)),
                Map.entry("databaseCommitsPerSaga", round((double) openCommits / open.size())),
                Map.entry("walPerSaga", openWalPerSaga),
                Map.entry("cpuSecondsPerSaga", round(openCpuSeconds / open.size(), 4)),
                Map.entry("coresBusy", round(openCpuSeconds / openSeconds))));
        r.put("postsAnsweredBusy", Map.of("warmup", busyInWarmup, "saturation", busyInSaturation, "openLoop", busyInOpen));
        r.put("commitToConsumerMillis", percentiles(relayLatencies));
        r.put("databaseCommitsPerSaga", round(commitsPerSaga));
        r.put("walPerSaga", walPerSaga);
        r.put("tableActivityPerSaga", rowsPerSaga);
        r.put("statementsPerSaga", statementsPerSaga);
        r.put("cpuSecondsPerSaga", round(cpuSeconds / saturation.size(), 4));
        r.put("cpuSecondsByProcess", roundAll(cpuByProcess));
        r.put("postgresCpuMillisPerSagaByKind", postgresCpu);
        // per process and phase: below saturation a saga costs about twice its CPU at saturation, and these say whose
        r.put("cpuMillisPerSagaByProcess", Map.of("saturation", millisPerSaga(cpuByProcess, saturation.size()),
                "openLoop", millisPerSaga(openCpuByProcess, open.size())));
        r.put("openLoopPostgresCpuMillisPerSagaByKind", postgresCpuByKind(openCpuBefore, openCpuAfter, open.size()));
        // what the stack costs by the second, sagas or none (its timers, polls and sweeps): a share of a saga's CPU
        // that grows as the rate falls
        r.put("idleStackCoresByProcess", pgbench.idleStackCores());
        Map<String, Object> jit = new LinkedHashMap<>();
        jit.put("warmup", roundAll(jitSeconds(jitBeforeWarmup, jitBeforeSaturation)));
        jit.put("saturation", roundAll(jitSeconds(jitBeforeSaturation, jitAfterSaturation)));
        jit.put("openLoop", roundAll(jitSeconds(jitBeforeOpen, jitAfterOpen)));
        r.put("jitCompilerCpuSeconds", jit);
        r.put("peakMemoryMiB", peakMemory());
        r.put("machineLoad", Map.of("saturation", saturationMachine, "openLoop", openMachine));
        Map<String, Object> physicalLimit = new LinkedHashMap<>();
        physicalLimit.put("pgbenchStepTps", round(pgbench.tps()));
        physicalLimit.put("sagasPerSecond", round(limit));
        physicalLimit.put("ourRatio", round(throughput / limit));
        physicalLimit.put("pgbenchCpuMillisPerStep", round(pgbench.cpuMillisPerStep()));
        physicalLimit.put("stepsCpuMillisPerSaga", round(stepsCpuMillis));
        physicalLimit.put("machineCpuMillisPerSaga", round(sagaCpuMillis));
        physicalLimit.put("servicesCpuMillisPerSaga", round(servicesCpuMillis));
        physicalLimit.put("ratioIfServicesTookNoCpu",
                round(throughput / limit * sagaCpuMillis / Math.max(0.001, sagaCpuMillis - servicesCpuMillis)));
        r.put("physicalLimit", physicalLimit);
        write(r, latencies);
        return r;
    }

    // --- load

    /**
     * Sends closed-loop rounds until the JIT has compiled what the saga runs: a round in which the compiler threads of
     * the stack used less than {@link Settings#warmupQuietCores()}, or {@link Settings#warmupOrders()} in all. C1
     * gets there within a few thousand orders; C2 keeps compiling for many more (a third of a core still after 12000
     * orders on the benchmark machine), and a fixed warm-up either wasted minutes or measured the compiler.
     */
    private Warmup warmUp() throws Exception {
        return untilJitQuiet(settings.warmupOrders(), settings.warmupRound(), Duration.ofMinutes(20),
                this::sendClosedLoop, (step, orders, seconds, jit) -> System.out.printf(
                        "warm-up round %d: %d orders in %.1f s, JIT compilers %.2f cores%n", step, orders, seconds, jit));
    }

    /**
     * Runs the open loop unmeasured, in slices, until a slice in which the stack's JIT compilers used less than
     * {@link Settings#warmupQuietCores()}. At an open-loop rate a poll carries about one event: one event, one
     * transaction, a path the closed-loop phases hardly take. With a fixed 15 s of it the measured open loop still
     * had the compilers at 0.17 of a core (5.7 CPU seconds in 30 s), on a machine 1.84 of whose 2 cores were busy: the
     * tail measured the compiler. A service in production is warm on this path too.
     *
     * @return as {@link #warmUp}, in seconds run and slices
     */
    private Warmup warmUpOpenLoop(double rate) throws Exception {
        return untilJitQuiet(settings.openLoopWarmupMaxSeconds(), settings.openLoopWarmupSeconds(), Duration.ofMinutes(10),
                seconds -> sendOpenLoop(rate, seconds), (step, seconds, took, jit) -> System.out.printf(
                        "open loop: %.1f orders/s, unmeasured slice %d of %d s, JIT compilers %.2f cores%n",
                        rate, step, seconds, jit));
    }

    /** Sends a step of load: so many orders, or orders for so many seconds. */
    @FunctionalInterface
    private interface LoadStep {
        List<Sent> send(int size) throws Exception;
    }

    /** Tells a person watching how a step went. */
    @FunctionalInterface
    private interface StepReport {
        void report(int step, int size, double seconds, double jitCores);
    }

    /**
     * Sends steps of load of {@code step} each, every one confirmed before the next, until a step in which the stack's
     * JIT compilers used less than {@link Settings#warmupQuietCores()}, or {@code budget} in all.
     */
    private Warmup untilJitQuiet(int budget, int step, Duration confirmWithin, LoadStep load, StepReport report)
            throws Exception {
        int spent = 0;
        int steps = 0;
        double jitCores = Double.NaN;
        while (spent < budget) {
            int size = Math.min(step, budget - spent);
            Map<String, Long> jitBefore = compilerTicks();
            long mark = timelineMark();
            long t0 = System.nanoTime();
            confirmAll(load.send(size), mark, confirmWithin);
            double seconds = (System.nanoTime() - t0) / 1e9;
            jitCores = jitSeconds(jitBefore, compilerTicks()).values().stream()
                    .mapToDouble(Double::doubleValue).sum() / seconds;
            spent += size;
            steps++;
            report.report(steps, size, seconds, jitCores);
            if (jitCores < settings.warmupQuietCores()) {
                return new Warmup(spent, steps, jitCores, true);
            }
        }
        return new Warmup(spent, steps, jitCores, false);
    }

    private record Sent(UUID orderId, Instant sentAt) {
    }

    private List<Sent> sendClosedLoop(int n) throws Exception {
        Semaphore inFlight = new Semaphore(settings.concurrency());
        List<CompletableFuture<Sent>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            inFlight.acquire();
            all.add(send(Instant.now()).whenComplete((s, e) -> inFlight.release()));
        }
        return join(all);
    }

    private List<Sent> sendOpenLoop(double rate, int seconds) throws Exception {
        int n = (int) Math.max(1, Math.round(rate * seconds));
        long intervalNanos = (long) (1e9 / rate);
        ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
        List<CompletableFuture<Sent>> all = Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        Instant startedAt = Instant.now();
        // sent on schedule whatever the answers: an open loop, so a slow system cannot slow the load down. Each
        // order's latency counts from when it was due, not from when the clock's thread got to it: a send held up
        // (this JVM's pause, a CPU the stack keeps busy) is the system's delay too, and left out it would hide the tail
        for (int i = 0; i < n; i++) {
            CompletableFuture<Sent> f = new CompletableFuture<>();
            all.add(f);
            long due = i * intervalNanos;
            Instant dueAt = startedAt.plusNanos(due);
            clock.schedule(() -> send(dueAt).whenComplete((s, e) -> {
                if (e != null) {
                    f.completeExceptionally(e);
                } else {
                    f.complete(s);
                }
            }), due - (System.nanoTime() - start), TimeUnit.NANOSECONDS);
        }
        List<Sent> sent = join(all);
        clock.shutdown();
        return sent;
    }

    private CompletableFuture<Sent> send(Instant sentAt) {
        String body = """
                {"customerId": "bench", "items": [{"sku": "%s", "quantity": 1, "unitPrice": 10.50}], "currency": "EUR",
                 "paymentToken": "tok_ok", "shippingAddress": {"name": "Ada", "line1": "12 St James Square",
                 "city": "London", "postalCode": "SW1Y 4JH", "country": "GB"}}""".formatted(sku);
        HttpRequest request = HttpRequest.newBuilder(URI.create(saga.url(SagaSystem.ORDER) + "/orders"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return post(request, sentAt);
    }

    /**
     * A 503 (busy: nothing was written) is sent again after its Retry-After, as a client would; the order's latency
     * counts from the first try.
     */
    private CompletableFuture<Sent> post(HttpRequest request, Instant sentAt) {
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenCompose(response -> {
            if (response.statusCode() == 503) {
                busyAnswers.incrementAndGet();
                long seconds = response.headers().firstValueAsLong("Retry-After").orElse(1);
                return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(seconds, TimeUnit.SECONDS))
                        .thenCompose(ignored -> post(request, sentAt));
            }
            if (response.statusCode() != 201) {
                throw new IllegalStateException("POST /orders answered " + response.statusCode() + ": " + response.body());
            }
            String id = response.body().replaceAll(".*\"orderId\":\"([^\"]+)\".*", "$1");
            return CompletableFuture.completedFuture(new Sent(UUID.fromString(id), sentAt));
        });
    }

    private static List<Sent> join(List<CompletableFuture<Sent>> all) {
        List<Sent> sent = new ArrayList<>();
        for (CompletableFuture<Sent> f : new ArrayList<>(all)) {
            sent.add(f.join());
        }
        return sent;
    }

    /**
     * Waits until every order is CONFIRMED; returns when each was, by its OrderConfirmed event. The benchmark shares
     * the machine with what it measures, so its looks must cost little: one database session for the whole wait (a
     * connection per look forked and authenticated a backend five times a second), and each look reads only the
     * timeline rows added since the looks of the last {@link #LOOK_OVERLAP}, by their sequence number (a range of the
     * primary key), not the orders still waiting. Asking for every waiting order by id made PostgreSQL probe the
     * timeline's index for each of them, thousands of times a look (200 index scans a saga at saturation), with a
     * fifth of a core that no figure of the stack counted. The overlap is there because sequence numbers are taken at
     * insert and committed in another order; should a row still commit later than that, a look that finds nothing
     * new while orders wait asks for the waiting ones by id.
     */
    private Map<UUID, Instant> confirmAll(List<Sent> sent, long timelineMark, Duration timeout) throws Exception {
        Map<UUID, Instant> confirmed = new ConcurrentHashMap<>();
        Set<UUID> waiting = ConcurrentHashMap.newKeySet();
        sent.forEach(s -> waiting.add(s.orderId()));
        try (Connection c = TestStack.connect("order_db");
             PreparedStatement since = c.prepareStatement("SELECT seq, order_id, occurred_at FROM saga_event "
                     + "WHERE seq > ? AND type = 'OrderConfirmed'");
             PreparedStatement byId = c.prepareStatement("SELECT seq, order_id, occurred_at FROM saga_event "
                     + "WHERE type = 'OrderConfirmed' AND order_id = ANY (?)")) {
            SeqWindow window = new SeqWindow(timelineMark);
            await("confirmed").atMost(timeout).pollInterval(Duration.ofMillis(200)).until(() -> {
                PreparedStatement look;
                boolean quiet = window.quiet();
                if (quiet) {
                    byId.setArray(1, c.createArrayOf("uuid", waiting.toArray()));
                    look = byId;
                } else {
                    since.setLong(1, window.floor());
                    look = since;
                }
                int found = 0;
                try (ResultSet rs = look.executeQuery()) {
                    ownCommits.incrementAndGet();
                    while (rs.next()) {
                        window.saw(rs.getLong(1));
                        UUID id = (UUID) rs.getObject(2);
                        if (waiting.remove(id)) {
                            confirmed.put(id, rs.getTimestamp(3).toInstant());
                            found++;
                        }
                    }
                }
                window.looked(found > 0 || quiet);
                return waiting.isEmpty();
            });
        }
        return confirmed;
    }

    /**
     * The highest sequence number in the order's timeline so far, read before orders are sent: every timeline row of
     * those orders is numbered after it. Asking for the lowest number among the sent orders' rows instead
     * ({@code order_id = ANY (...)} with thousands of ids) was planned as a scan of the whole timeline, over a second of a
     * core on a database that had seen half a million sagas, spent in the stack's PostgreSQL while it still confirmed
     * the orders being measured.
     */
    private long timelineMark() throws SQLException {
        try (Connection c = TestStack.connect("order_db");
             PreparedStatement highest = c.prepareStatement("SELECT coalesce(max(seq), 0) FROM saga_event")) {
            ownCommits.incrementAndGet();
            return queryLong(highest);
        }
    }

    private static final Duration LOOK_OVERLAP = Duration.ofSeconds(5);

    /**
     * Where the next look at the timeline starts: after the highest sequence number seen {@link #LOOK_OVERLAP} ago,
     * so that a row whose number was taken before that but committed since is still read.
     */
    private static final class SeqWindow {
        private final ArrayDeque<long[]> looks = new ArrayDeque<>();
        private long floor;
        private long highest;
        private long lastFoundNanos = System.nanoTime();

        SeqWindow(long floor) {
            this.floor = floor;
            this.highest = floor;
        }

        long floor() {
            return floor;
        }

        void saw(long seq) {
            highest = Math.max(highest, seq);
        }

        /** @param progress the look found orders confirmed, or asked for the waiting ones by id */
        void looked(boolean progress) {
            long now = System.nanoTime();
            if (progress) {
                lastFoundNanos = now;
            }
            looks.addLast(new long[] {now, highest});
            while (!looks.isEmpty() && now - looks.peekFirst()[0] >= LOOK_OVERLAP.toNanos()) {
                floor = Math.max(floor, looks.pollFirst()[1]);
            }
        }

        /** Nothing new for a while: the next look asks for the waiting orders by id. */
        boolean quiet() {
            return System.nanoTime() - lastFoundNanos >= 2 * LOOK_OVERLAP.toNanos();
        }
    }

    private static long queryLong(PreparedStatement statement) throws SQLException {
        try (ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Every hop of the orders' events: from an event leaving in its outbox (its occurred_at, stamped in the transaction
     * that commits it, whose outbox write is the last; so the commit and its flush are in the figure) to each consumer
     * that handled it claiming it in its inbox (received_at: the start of the transaction that applied it, before its
     * own commit). Nine hops a confirmed saga, all four relays and every consumer; the events a consumer passes over
     * (OrderConfirmed at payment and shipping) claim nothing and are not counted. order-service's timeline has every
     * event's occurred_at, its own and those it heard.
     */
    private List<Double> commitToConsumer(List<Sent> sent) throws Exception {
        Object[] orders = sent.stream().map(Sent::orderId).toArray();
        Map<UUID, Instant> occurred = new HashMap<>();
        try (Connection c = TestStack.connect("order_db"); PreparedStatement ps = c.prepareStatement(
                "SELECT event_id, occurred_at FROM saga_event WHERE order_id = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("uuid", orders));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    occurred.put(rs.getObject(1, UUID.class), rs.getTimestamp(2).toInstant());
                }
            }
        }
        List<Double> millis = new ArrayList<>();
        for (String database : List.of("order_db", "inventory_db", "payment_db", "shipping_db")) {
            try (Connection c = TestStack.connect(database); PreparedStatement ps = c.prepareStatement(
                    "SELECT event_id, received_at FROM inbox WHERE order_id = ANY (?)")) {
                ps.setArray(1, c.createArrayOf("uuid", orders));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        Instant at = occurred.get(rs.getObject(1, UUID.class));
                        if (at != null) {
                            millis.add(Duration.between(at, rs.getTimestamp(2).toInstant()).toNanos() / 1e6);
                        }
                    }
                }
            }
        }
        return millis;
    }

    // --- resources

    /**
     * Commits in the four databases, without the benchmark's own looks (five a second, a fifth of a commit per saga
     * at 25 sagas/s).
     */
    private long commits() throws Exception {
        return count("postgres", "SELECT sum(xact_commit) FROM pg_stat_database WHERE datname IN "
                + "('order_db', 'inventory_db', 'payment_db', 'shipping_db')") - ownCommits.get();
    }

    /**
     * Orders an earlier run left in flight (a run that was stopped half-way): their events are worked off during
     * this run and count against it, so the summary says so.
     */
    private static long unfinishedOrders() throws Exception {
        return count("order_db", "SELECT count(*) FROM orders WHERE status NOT IN ('CONFIRMED', 'CANCELLED') "
                + "AND waiting_reason IS NULL");
    }

    /**
     * WAL written by the whole cluster since its statistics were reset, bytes and full-page images (pg_stat_wal): every
     * walsender reads all of it and every commit flushes its share, so it is a cost of its own besides the commits.
     */
    private static long[] wal() throws Exception {
        try (Connection c = TestStack.connect("postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT wal_bytes::bigint, wal_fpi FROM pg_stat_wal")) {
            rs.next();
            return new long[]{rs.getLong(1), rs.getLong(2)};
        }
    }

    private static Map<String, Double> walPerSaga(long[] before, long[] after, int sagas) {
        Map<String, Double> perSaga = new LinkedHashMap<>();
        perSaga.put("kiB", round((after[0] - before[0]) / 1024.0 / sagas));
        perSaga.put("fullPageImages", round((double) (after[1] - before[1]) / sagas));
        return perSaga;
    }

    private static long count(String database, String sql) throws Exception {
        try (Connection c = TestStack.connect(database); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Rows inserted, updated and deleted and index scans per table (pg_stat_user_tables), keyed "db.table": where a
     * saga's database work goes. The benchmark's own status polling reads orders and saga_event too.
     */
    private static Map<String, long[]> tableActivity() throws Exception {
        Map<String, long[]> activity = new LinkedHashMap<>();
        for (String db : DATABASES) {
            try (Connection c = TestStack.connect(db); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT relname, n_tup_ins, n_tup_upd, n_tup_del, coalesce(idx_scan, 0) "
                         + "FROM pg_stat_user_tables WHERE relname NOT IN ('flyway_schema_history') ORDER BY relname")) {
                while (rs.next()) {
                    activity.put(db.replace("_db", "") + "." + rs.getString(1),
                            new long[]{rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)});
                }
            }
        }
        return activity;
    }

    /**
     * The table activity once it has stopped changing: a saga's last steps (inventory consuming the reservation on
     * OrderConfirmed) run after the order is confirmed, and PostgreSQL publishes a busy backend's counts up to a
     * second late, an idle one's up to ten.
     */
    private static Map<String, long[]> settledTableActivity(Map<String, long[]> before) throws Exception {
        AtomicReference<Map<String, long[]>> last = new AtomicReference<>(tableActivity());
        try {
            // an idle backend publishes its last counts up to 10 s late (PostgreSQL's PGSTAT_IDLE_INTERVAL). Settled
            // means: the writes of the last window are under 1 % of the phase's, since on a shared stack something
            // (a compensation retried until it succeeds, an operator's order) may always be writing a little.
            await("table activity settled").atMost(Duration.ofSeconds(60)).pollDelay(Duration.ofSeconds(11))
                    .pollInterval(Duration.ofSeconds(11)).until(() -> {
                        Map<String, long[]> now = tableActivity();
                        long window = writes(last.get(), now);
                        long phase = writes(before, now);
                        last.set(now);
                        return window * 100 <= phase;
                    });
        } catch (ConditionTimeoutException e) {
            System.out.println("table activity did not settle within a minute: the rows per saga are a little low");
        }
        return last.get();
    }

    /** Rows written between two snapshots, without the relay's offsets (rewritten every second, saga or not). */
    private static long writes(Map<String, long[]> from, Map<String, long[]> to) {
        long sum = 0;
        for (var e : to.entrySet()) {
            if (e.getKey().endsWith(".cdc_offset")) {
                continue;
            }
            long[] base = from.getOrDefault(e.getKey(), new long[4]);
            for (int i = 0; i < 3; i++) {
                sum += e.getValue()[i] - base[i];
            }
        }
        return sum;
    }

    private static Map<String, Map<String, Double>> perSaga(Map<String, long[]> before, Map<String, long[]> after, int sagas) {
        String[] names = {"inserted", "updated", "deleted", "indexScans"};
        Map<String, Map<String, Double>> result = new LinkedHashMap<>();
        after.forEach((table, counts) -> {
            long[] base = before.getOrDefault(table, new long[counts.length]);
            Map<String, Double> row = new LinkedHashMap<>();
            for (int i = 0; i < names.length; i++) {
                double v = (double) (counts[i] - base[i]) / sagas;
                if (v >= 0.005) {
                    row.put(names[i], round(v));
                }
            }
            if (!row.isEmpty()) {
                result.put(table, row);
            }
        });
        return result;
    }

    /**
     * Empties pg_stat_statements, so that what it counts next is the saturation phase's. False where the extension
     * is not loaded: a PostgreSQL that deploy/stack.sh did not configure.
     */
    private static boolean resetStatementCounts() throws Exception {
        try (Connection c = TestStack.connect("postgres"); Statement st = c.createStatement()) {
            st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            st.execute("SELECT pg_stat_statements_reset()");
            return true;
        } catch (SQLException e) {
            System.out.println("statements are not counted: " + e.getMessage());
            return false;
        }
    }

    /**
     * The statements each service sent per saga (pg_stat_statements, the services' own roles only: not the
     * benchmark's looks), and the ones it sent most. BEGIN, COMMIT and ROLLBACK are left out: how many there are
     * depends on how many events a poll brought, so on the load, while the saga's own statements do not. Unlike
     * throughput, which varies by a third between runs on a shared machine, these counts repeat: a change that
     * saves a statement shows here.
     */
    private static Map<String, Object> statementsPerSaga(int sagas) throws Exception {
        Map<String, long[]> totals = new LinkedHashMap<>();
        Map<String, Map<String, Double>> most = new LinkedHashMap<>();
        try (Connection c = TestStack.connect("postgres"); PreparedStatement ps = c.prepareStatement("""
                SELECT d.datname, s.calls, s.total_exec_time, regexp_replace(s.query, '\\s+', ' ', 'g')
                FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid JOIN pg_roles r ON r.oid = s.userid
                WHERE r.rolname = replace(d.datname, '_db', '_svc') AND d.datname = ANY (?)
                  AND upper(s.query) NOT IN ('BEGIN', 'COMMIT', 'ROLLBACK')
                ORDER BY d.datname, s.calls DESC""")) {
            ps.setArray(1, c.createArrayOf("text", DATABASES.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String service = rs.getString(1).replace("_db", "");
                    long calls = rs.getLong(2);
                    long[] total = totals.computeIfAbsent(service, k -> new long[2]);
                    total[0] += calls;
                    total[1] += Math.round(rs.getDouble(3) * 1000);
                    Map<String, Double> top = most.computeIfAbsent(service, k -> new LinkedHashMap<>());
                    double perSaga = (double) calls / sagas;
                    if (top.size() < 6 && perSaga >= 0.05) {
                        String query = rs.getString(4);
                        top.put(query.length() > 100 ? query.substring(0, 100) + "…" : query, round(perSaga));
                    }
                }
            }
        }
        Map<String, Object> byService = new LinkedHashMap<>();
        totals.forEach((service, total) -> {
            Map<String, Object> figures = new LinkedHashMap<>();
            figures.put("statements", round((double) total[0] / sagas));
            figures.put("executionMillis", round(total[1] / 1000.0 / sagas));
            figures.put("most", most.get(service));
            byService.put(service, figures);
        });
        return byService;
    }

    /**
     * Whether a commit is on disk when it returns: fsync and full-page writes on, and no synchronous_commit off,
     * neither the server's nor one set for a database or a role (which a session of the services would take).
     */
    private boolean durable() throws Exception {
        try (Connection c = TestStack.connect("postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("""
                     SELECT current_setting('fsync') = 'on' AND current_setting('full_page_writes') = 'on'
                        AND current_setting('synchronous_commit') <> 'off'
                        AND NOT EXISTS (SELECT 1 FROM pg_db_role_setting, unnest(setconfig) AS s
                                        WHERE s ~* '^synchronous_commit=(off|false|no|0)$')""")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /**
     * CPU clock ticks (user + system) of every process of the stack, by a readable name, and under {@link #ENDED} the
     * ticks of the PostgreSQL processes that have ended, as the postmaster has counted its reaped children. Read last,
     * so that a process found ended while this reads is more likely counted there already.
     */
    private Map<String, Long> cpuTicks() throws IOException {
        Map<String, Long> ticks = new LinkedHashMap<>();
        Map<Long, Long> postgresParents = new LinkedHashMap<>();
        for (var p : processes().entrySet()) {
            try {
                String[] f = statFields(Path.of("/proc", Long.toString(p.getValue()), "stat"));
                ticks.put(p.getKey(), Long.parseLong(f[11]) + Long.parseLong(f[12]));
                if (p.getKey().startsWith("postgres#")) {
                    postgresParents.put(p.getValue(), Long.parseLong(f[1]));
                }
            } catch (IOException gone) {
                // a PostgreSQL backend that ended between listing and reading
            }
        }
        for (var p : postgresParents.entrySet()) {
            if (!postgresParents.containsKey(p.getValue())) {
                try {
                    String[] f = statFields(Path.of("/proc", Long.toString(p.getKey()), "stat"));
                    ticks.put(ENDED, Long.parseLong(f[13]) + Long.parseLong(f[14]));
                } catch (IOException gone) {
                    // PostgreSQL stopped: the phase fails on its own
                }
            }
        }
        return ticks;
    }

    /**
     * Each process's CPU ticks within a phase, from two {@link #cpuTicks()} readings. A PostgreSQL process that ended
     * within it (an autovacuum worker, a session its pool closed) is missing from the second reading; its ticks are in
     * the postmaster's count of its ended children, which holds their whole lives, so what the first reading had seen
     * of them is taken off.
     */
    static Map<String, Long> phaseTicks(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> ticks = new LinkedHashMap<>();
        after.forEach((process, t) -> {
            if (!process.equals(ENDED)) {
                ticks.put(process, t - before.getOrDefault(process, 0L));
            }
        });
        if (before.containsKey(ENDED) && after.containsKey(ENDED)) {
            long ended = after.get(ENDED) - before.get(ENDED);
            for (var e : before.entrySet()) {
                if (e.getKey().startsWith("postgres#") && !after.containsKey(e.getKey())) {
                    ended -= e.getValue();
                }
            }
            // a process read just before it ended and reaped just after the postmaster was read
            ticks.put(ENDED, Math.max(0, ended));
        }
        return ticks;
    }

    /**
     * CPU clock ticks of the JIT compiler threads of every JVM of the stack (the services, the sandboxes, Kafka): how
     * much of a phase went to compiling rather than to the saga. A warm-up is long enough when this is near zero in
     * the phases after it; with C2 it takes several times as many orders as with C1.
     */
    private Map<String, Long> compilerTicks() throws IOException {
        Map<String, Long> ticks = new LinkedHashMap<>();
        for (var p : processes().entrySet()) {
            if (p.getKey().startsWith("postgres")) {
                continue;
            }
            long sum = 0;
            try (var threads = Files.list(Path.of("/proc", Long.toString(p.getValue()), "task"))) {
                for (Path thread : threads.toList()) {
                    try {
                        if (isCompilerThread(Files.readString(thread.resolve("comm")).strip())) {
                            sum += ticksOf(thread.resolve("stat"));
                        }
                    } catch (IOException gone) {
                        // a compiler thread the JVM retired meanwhile (it starts and stops them with the load)
                    }
                }
            } catch (IOException gone) {
                continue;
            }
            ticks.put(p.getKey(), sum);
        }
        return ticks;
    }

    /**
     * CPU seconds of the compiler threads between two {@link #compilerTicks()} readings. Where a JVM has more than one
     * compiler thread of a kind it may retire one meanwhile, and its ticks leave the sum: such a process reads zero
     * rather than less than nothing.
     */
    private static Map<String, Double> jitSeconds(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Double> seconds = cpuSecondsByProcess(before, after);
        seconds.replaceAll((process, s) -> Math.max(0, s));
        return seconds;
    }

    /** HotSpot names them "C1 CompilerThread0", "C2 CompilerThread1", …; Linux keeps the first 15 characters. */
    static boolean isCompilerThread(String comm) {
        return comm.matches("C[12] CompilerThr.*");
    }

    /** User and system CPU clock ticks of one process (or thread), from its /proc/PID/stat. */
    private static long ticksOf(Path stat) throws IOException {
        String[] f = statFields(stat);
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /** The fields of a /proc/PID/stat after the command's name: [0] is the state, [1] the parent, [11] utime. */
    private static String[] statFields(Path stat) throws IOException {
        return Files.readString(stat).replaceAll("^.*\\) ", "").split(" ");
    }

    /** CPU seconds between two {@link #cpuTicks()} readings, PostgreSQL's processes summed under one name. */
    static Map<String, Double> cpuSecondsByProcess(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Double> seconds = new LinkedHashMap<>();
        phaseTicks(before, after).forEach((process, t) -> seconds.merge(process.replaceAll("#.*$", ""), t / 100.0,
                Double::sum));
        return seconds;
    }

    private static Map<String, Double> millisPerSaga(Map<String, Double> seconds, int sagas) {
        Map<String, Double> millis = new LinkedHashMap<>();
        seconds.forEach((process, s) -> millis.put(process, round(s * 1000 / sagas)));
        return millis;
    }

    /**
     * PostgreSQL's CPU by what its processes do, in milliseconds a saga: the services' sessions (protocol, parsing,
     * planning, executing, committing), the walsenders that decode the log for the relays, the WAL writer,
     * checkpointer and background writer, autovacuum, and the rest (the postmaster, the benchmark's own looks).
     * What the processes that ended during the phase took is counted apart, their kinds unknown.
     */
    private Map<String, Double> postgresCpuByKind(Map<String, Long> before, Map<String, Long> after, int sagas) {
        Map<String, Double> millis = new LinkedHashMap<>();
        for (String kind : List.of("service sessions", "walsenders", "WAL writer, checkpointer, background writer",
                "autovacuum", "other", ENDED_KIND)) {
            millis.put(kind, 0.0);
        }
        for (var e : phaseTicks(before, after).entrySet()) {
            if (e.getKey().equals(ENDED)) {
                millis.merge(ENDED_KIND, e.getValue() * 10.0 / sagas, Double::sum);
            } else if (e.getKey().startsWith("postgres#")) {
                String kind = postgresKinds.getOrDefault(Long.parseLong(e.getKey().substring("postgres#".length())), "other");
                millis.merge(kind, e.getValue() * 10.0 / sagas, Double::sum);
            }
        }
        millis.replaceAll((kind, ms) -> round(ms));
        return millis;
    }

    /** A PostgreSQL process's kind, from its title, e.g. "postgres: 15/main: walsender order_svc 127.0.0.1(…)". */
    static String postgresKind(String cmdline) {
        String title = cmdline.replace('\0', ' ').replaceFirst("^postgres: (\\S+: )?", "").strip();
        if (title.startsWith("walsender ")) {
            return "walsenders";
        }
        if (title.matches("^\\w+_svc .*")) {
            return "service sessions";
        }
        if (title.startsWith("walwriter") || title.startsWith("checkpointer") || title.startsWith("background writer")) {
            return "WAL writer, checkpointer, background writer";
        }
        if (title.startsWith("autovacuum")) {
            return "autovacuum";
        }
        return "other";
    }

    /**
     * The whole machine's CPU ticks (/proc/stat): busy is everything but idle, iowait and steal; steal is what the
     * hypervisor gave to other guests while this one wanted to run; and when they were read, since a phase's load is
     * divided by the time between its two readings.
     */
    private record MachineTicks(long busy, long steal, long total, long loadGenerator, long nanos) {

        static MachineTicks read() throws IOException {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            // user nice system idle iowait irq softirq steal; guest time is counted in user already
            long total = 0;
            for (int i = 1; i <= 8; i++) {
                total += Long.parseLong(f[i]);
            }
            long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
            long steal = Long.parseLong(f[8]);
            return new MachineTicks(total - idle - steal, steal, total, ticksOf(Path.of("/proc/self/stat")), System.nanoTime());
        }
    }

    /**
     * Where the machine's CPU went during a phase: the stack, this process (the load generator, which shares the
     * cores), and anything else; and the share the hypervisor stole. Two runs' figures compare only when their
     * "anything else" and steal are alike: on the machines this was built on, runs varied as much as a change does.
     */
    private static Map<String, Double> machineLoad(MachineTicks before, MachineTicks after, double stackCpuSeconds) {
        // the ticks' own span, not the phase's: the readings around a phase take time of their own, and a short phase
        // divided by its own seconds read more cores busy than the machine has
        double seconds = (after.nanos() - before.nanos()) / 1e9;
        double busy = (after.busy() - before.busy()) / 100.0 / seconds;
        double stack = stackCpuSeconds / seconds;
        double loadGenerator = (after.loadGenerator() - before.loadGenerator()) / 100.0 / seconds;
        Map<String, Double> load = new LinkedHashMap<>();
        load.put("coresBusy", round(busy));
        load.put("stackCores", round(stack));
        load.put("loadGeneratorCores", round(loadGenerator));
        load.put("otherCores", round(Math.max(0, busy - stack - loadGenerator)));
        load.put("stealShare", round((double) (after.steal() - before.steal()) / Math.max(1, after.total() - before.total())));
        return load;
    }

    /**
     * Each JVM's and sandbox's peak resident memory (Kafka's since it started, which may be before this run), and
     * PostgreSQL's as {@link #samplePostgresMemory} saw it at most.
     */
    private Map<String, Long> peakMemory() throws IOException {
        Map<String, Long> mib = new LinkedHashMap<>();
        for (var p : processes().entrySet()) {
            if (!p.getKey().startsWith("postgres#")) {
                statusKb(p.getValue()).ifPresent(kb -> {
                    if (kb.containsKey("VmHWM")) {
                        mib.put(p.getKey(), kb.get("VmHWM") / 1024);
                    }
                });
            }
        }
        mib.put("postgres (shared once, and each process's own: the most of the readings, every 2 s)",
                postgresPeakKb.get() / 1024);
        return mib;
    }

    /**
     * PostgreSQL's resident memory now, kept if it is the most read yet. Its processes share their buffers, which every
     * one of them counts as its own, so it is the shared memory once (the most any process has mapped) and the private
     * memory of each, summed. No process has a peak of the whole: the sessions a pool opens under load and closes
     * after, and autovacuum's workers, are gone by the run's end, so it is read every 2 s while the saga runs.
     */
    private void samplePostgresMemory() {
        try {
            long shared = 0;
            long own = 0;
            for (var p : processes().entrySet()) {
                if (p.getKey().startsWith("postgres#")) {
                    Optional<Map<String, Long>> kb = statusKb(p.getValue());
                    if (kb.isPresent()) {
                        shared = Math.max(shared, kb.get().getOrDefault("RssShmem", 0L));
                        own += kb.get().getOrDefault("RssAnon", 0L);
                    }
                }
            }
            postgresPeakKb.accumulateAndGet(shared + own, Math::max);
        } catch (IOException | RuntimeException e) {
            // /proc read while processes come and go: the next reading counts
        }
    }

    /** A process's resident memory figures (kB) from /proc, empty if it has ended. */
    private static Optional<Map<String, Long>> statusKb(long pid) {
        Map<String, Long> kb = new HashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.matches("(VmHWM|RssAnon|RssShmem):.*")) {
                    kb.put(line.substring(0, line.indexOf(':')), Long.parseLong(line.replaceAll("\\D", "")));
                }
            }
        } catch (IOException gone) {
            return Optional.empty();
        }
        return Optional.of(kb);
    }

    private Map<String, Long> processes() throws IOException {
        Map<String, Long> pids = new LinkedHashMap<>(saga.pids());
        try (var dirs = Files.list(Path.of("/proc"))) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().matches("\\d+")).toList()) {
                try {
                    String comm = Files.readString(dir.resolve("comm")).strip();
                    String cmdline = Files.readString(dir.resolve("cmdline"));
                    long pid = Long.parseLong(dir.getFileName().toString());
                    if (comm.equals("postgres")) {
                        pids.put("postgres#" + pid, pid);
                        postgresKinds.computeIfAbsent(pid, p -> postgresKind(cmdline));
                    } else if (comm.equals("java") && cmdline.contains("kafka.Kafka")) {
                        pids.put("kafka", pid);
                    }
                } catch (IOException gone) {
                    // ended meanwhile
                }
            }
        }
        return pids;
    }

    // --- the physical limit

    /** pgbench on the same PostgreSQL: one saga step's transaction (inbox insert, state update, outbox insert). */
    private Pgbench pgbench() throws Exception {
        try (Connection c = TestStack.connect("postgres"); Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT 1 FROM pg_database WHERE datname = 'saga_bench'")) {
                if (!rs.next()) {
                    st.execute("CREATE DATABASE saga_bench");
                }
            }
        }
        try (Connection c = TestStack.connect("saga_bench"); Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS inbox, orders, outbox");
            st.execute("CREATE TABLE inbox (event_id uuid PRIMARY KEY, event_type varchar(64) NOT NULL, "
                    + "topic varchar(128) NOT NULL, order_id uuid NOT NULL, correlation_id varchar(128) NOT NULL, "
                    + "received_at timestamptz NOT NULL DEFAULT now())");
            // as the services' tables: the inbox's pruning index, and room on an order's page for its updates
            st.execute("CREATE INDEX ON inbox (received_at)");
            st.execute("CREATE TABLE orders (id integer PRIMARY KEY, status varchar(32) NOT NULL, version bigint NOT NULL, "
                    + "updated_at timestamptz NOT NULL) WITH (fillfactor = 80)");
            st.execute("INSERT INTO orders SELECT g, 'PENDING', 0, now() FROM generate_series(1, 100000) g");
            st.execute("CREATE TABLE outbox (id uuid PRIMARY KEY, aggregate_type varchar(64) NOT NULL, "
                    + "aggregate_id varchar(64) NOT NULL, type varchar(64) NOT NULL, payload text NOT NULL, "
                    + "correlation_id varchar(128) NOT NULL, causation_id varchar(64), occurred_at timestamptz NOT NULL)");
        }
        Path script = Files.createTempFile("saga-step", ".sql");
        // to a file, read once it ended: read from its pipe, a pgbench that hangs would hang the run before any timeout
        Path output = Files.createTempFile("saga-step", ".out");
        try {
            Files.writeString(script, """
                    \\set id random(1, 100000)
                    \\set oid random(1, 281474976710655)
                    BEGIN;
                    INSERT INTO inbox VALUES (gen_random_uuid(), 'StockReserved', 'inventory.events', gen_random_uuid(), 'corr', now());
                    UPDATE orders SET status = 'STOCK_RESERVED', version = version + 1, updated_at = now() WHERE id = :id;
                    INSERT INTO outbox VALUES (('00000000-0000-0000-0000-' || lpad(to_hex(:oid::bigint), 12, '0'))::uuid, 'order.events', 'k', 'OrderEvent', repeat('x', 600), 'corr', NULL, now());
                    DELETE FROM outbox WHERE id = ('00000000-0000-0000-0000-' || lpad(to_hex(:oid::bigint), 12, '0'))::uuid;
                    COMMIT;
                    """);
            // prepared statements, as the services' pgjdbc makes them of the statements they repeat: parsed and planned
            // anew each time, the step would cost PostgreSQL more than the services' steps do, and the limit read low
            ProcessBuilder pb = new ProcessBuilder("pgbench", "-n", "-M", "prepared", "-c", "8", "-j", "2", "-T",
                    Integer.toString(settings.pgbenchSeconds()), "-f", script.toString(), "-h", TestStack.postgresHost(),
                    "-p", Integer.toString(TestStack.postgresPort()), "-U", TestStack.endpoints().adminUser(), "saga_bench")
                    .redirectErrorStream(true).redirectOutput(output.toFile());
            pb.environment().put("PGPASSWORD", TestStack.endpoints().adminPassword());
            Map<String, Long> stackBefore = cpuTicks();
            MachineTicks before = MachineTicks.read();
            Process p = pb.start();
            p.getOutputStream().close();
            boolean ended = p.waitFor(settings.pgbenchSeconds() + 120L, TimeUnit.SECONDS);
            MachineTicks after = MachineTicks.read();
            String out = Files.readString(output);
            // a client that aborted leaves a lower tps printed, which would lower the limit and raise our ratio
            if (!ended || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException("pgbench " + (ended ? "exited with " + p.exitValue() : "did not end")
                        + ", so its tps is no limit:\n" + out);
            }
            Map<String, Double> idleStack = cpuSecondsByProcess(stackBefore, cpuTicks());
            idleStack.remove("postgres");
            double idleStackSeconds = idleStack.values().stream().mapToDouble(Double::doubleValue).sum();
            double pgbenchSeconds = (after.nanos() - before.nanos()) / 1e9;
            Map<String, Double> idleStackCores = new LinkedHashMap<>();
            idleStack.forEach((process, seconds) -> idleStackCores.put(process, round(seconds / pgbenchSeconds)));
            double cpuSeconds = (after.busy() - before.busy()) / 100.0 - idleStackSeconds;
            long transactions = 0;
            for (String line : out.split("\n")) {
                if (line.startsWith("number of transactions actually processed: ")) {
                    transactions = Long.parseLong(line.replaceAll("\\D", ""));
                }
                if (line.startsWith("tps = ") && transactions > 0) {
                    return new Pgbench(Double.parseDouble(line.replaceAll("tps = ([0-9.]+).*", "$1")),
                            cpuSeconds * 1000 / transactions, idleStackCores);
                }
            }
            throw new IllegalStateException("pgbench gave no tps:\n" + out);
        } finally {
            Files.deleteIfExists(script);
            Files.deleteIfExists(output);
        }
    }

    // --- output

    private static Map<String, Double> percentiles(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        Map<String, Double> p = new LinkedHashMap<>();
        if (sorted.isEmpty()) {
            return p;
        }
        p.put("p50", round(at(sorted, 0.50)));
        p.put("p95", round(at(sorted, 0.95)));
        p.put("p99", round(at(sorted, 0.99)));
        p.put("max", round(sorted.get(sorted.size() - 1)));
        return p;
    }

    private static double at(List<Double> sorted, double q) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(q * sorted.size()) - 1));
    }

    private static double round(double v) {
        return round(v, 2);
    }

    /** A saga's CPU is 10 to 50 ms: in seconds, two decimals would read 0.01 for anything from 5 to 15 ms. */
    private static double round(double v, int decimals) {
        double scale = Math.pow(10, decimals);
        return Math.round(v * scale) / scale;
    }

    private static Map<String, Double> roundAll(Map<String, Double> m) {
        Map<String, Double> r = new LinkedHashMap<>();
        m.forEach((k, v) -> r.put(k, round(v)));
        return r;
    }

    private static double memoryGiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                return round(Long.parseLong(line.replaceAll("\\D", "")) / 1024.0 / 1024.0);
            }
        }
        return 0;
    }

    private void write(Map<String, Object> r, List<Double> latencies) throws IOException {
        Files.createDirectories(settings.outDir());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
                .writeValue(settings.outDir().resolve("benchmark.json").toFile(), r);
        @SuppressWarnings("unchecked") Map<String, Object> sat = (Map<String, Object>) r.get("saturation");
        @SuppressWarnings("unchecked") Map<String, Object> open = (Map<String, Object>) r.get("openLoop");
        @SuppressWarnings("unchecked") Map<String, Object> limit = (Map<String, Object>) r.get("physicalLimit");
        @SuppressWarnings("unchecked") Map<String, Object> machine = (Map<String, Object>) r.get("machineLoad");
        @SuppressWarnings("unchecked") Map<String, Object> cpuByPhase =
                (Map<String, Object>) r.get("cpuMillisPerSagaByProcess");
        long unfinished = (Long) r.get("unfinishedOrdersAtStart");
        String warning = unfinished == 0 ? "" : ("  WARNING: %d orders were unfinished at the start (an interrupted earlier run?); "
                + "what of them still moved counted against this run\n").formatted(unfinished);
        @SuppressWarnings("unchecked") Map<String, Map<String, Double>> tables =
                (Map<String, Map<String, Double>>) r.get("tableActivityPerSaga");
        StringBuilder activity = new StringBuilder();
        tables.forEach((table, row) -> activity.append("    ").append(table).append(' ').append(row).append('\n'));
        String summary = warning + """
                order-saga benchmark (%s; PostgreSQL durable: %s; services %s)
                  saturation: %s confirmed sagas/s (%s orders, %s clients)
                  POST -> CONFIRMED at %s orders/s (open loop, %s s after %s s at that rate unmeasured, the JIT then at %s cores, and %s s more): %s ms
                    open loop per saga: %s database commits, WAL %s, %s CPU seconds; %s cores busy by the stack
                  POSTs answered 503 (busy) and sent again: %s
                  outbox commit -> consumer (every hop, to its inbox claim): %s ms
                  per saga at saturation: %s database commits, WAL %s, %s CPU seconds
                  machine (cores busy; of them the stack, the load generator, anything else; share stolen by the hypervisor):
                    saturation %s
                    open loop %s
                  CPU ms per saga by process: saturation %s
                    open loop %s
                  PostgreSQL's CPU per saga, ms by kind of process: saturation %s
                    open loop %s
                  the stack idle (while pgbench ran), cores by process: %s
                  JIT compiler threads, CPU seconds by phase (near zero after the warm-up, or the figures include compiling): %s
                  peak memory (MiB): %s
                  physical limit: pgbench %s step tx/s / %s commits per saga = %s sagas/s; ours: %s of it
                    CPU ms: a pgbench step %s, the saga's commits as pgbench steps %s, a saga at saturation %s (the services %s);
                    with the services taking no CPU the ratio would be %s
                  statements per saga, by service (saturation phase; pg_stat_statements):%s
                  rows per saga, by table (saturation phase):
                %s""".formatted(r.get("machine"), r.get("postgresDurable"), r.get("services"), sat.get("confirmedSagasPerSecond"), sat.get("orders"),
                sat.get("concurrency"), open.get("ratePerSecond"), open.get("seconds"), open.get("warmupSeconds"), open.get("warmupLastSliceJitCores"),
                open.get("leadInSeconds"), open.get("postToConfirmedMillis"),
                open.get("databaseCommitsPerSaga"), open.get("walPerSaga"), open.get("cpuSecondsPerSaga"), open.get("coresBusy"),
                r.get("postsAnsweredBusy"), r.get("commitToConsumerMillis"), r.get("databaseCommitsPerSaga"), r.get("walPerSaga"),
                r.get("cpuSecondsPerSaga"),
                machine.get("saturation"), machine.get("openLoop"),
                cpuByPhase.get("saturation"), cpuByPhase.get("openLoop"),
                r.get("postgresCpuMillisPerSagaByKind"), r.get("openLoopPostgresCpuMillisPerSagaByKind"),
                r.get("idleStackCoresByProcess"), r.get("jitCompilerCpuSeconds"), r.get("peakMemoryMiB"),
                limit.get("pgbenchStepTps"), r.get("databaseCommitsPerSaga"),
                limit.get("sagasPerSecond"), limit.get("ourRatio"), limit.get("pgbenchCpuMillisPerStep"),
                limit.get("stepsCpuMillisPerSaga"), limit.get("machineCpuMillisPerSaga"), limit.get("servicesCpuMillisPerSaga"),
                limit.get("ratioIfServicesTookNoCpu"), statementLines(r.get("statementsPerSaga")), activity);
        Files.writeString(settings.outDir().resolve("summary.txt"), summary);
        System.out.println(summary);
        chart(latencies, settings.outDir().resolve("latency.png"));
    }

    @SuppressWarnings("unchecked")
    private static String statementLines(Object statements) {
        StringBuilder lines = new StringBuilder();
        ((Map<String, Object>) statements).forEach((service, figures) -> {
            if (!(figures instanceof Map)) {
                lines.append(' ').append(figures);
                return;
            }
            Map<String, Object> f = (Map<String, Object>) figures;
            lines.append("\n    ").append(service).append(": ").append(f.get("statements")).append(" statements, ")
                    .append(f.get("executionMillis")).append(" ms executing; most sent:");
            ((Map<String, Double>) f.get("most")).forEach((query, n) ->
                    lines.append("\n      ").append(n).append("  ").append(query));
        });
        return lines.toString();
    }

    /** The distribution of POST -> CONFIRMED latencies in the open-loop phase, as a CDF a person can look at. */
    private static void chart(List<Double> latencies, Path file) throws IOException {
        List<Double> sorted = new ArrayList<>(latencies);
        Collections.sort(sorted);
        int w = 900;
        int h = 500;
        int left = 70;
        int bottom = 60;
        BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
        g.drawString("POST /orders -> CONFIRMED latency, open loop (cumulative share of orders)", left, 25);
        g.drawLine(left, h - bottom, w - 20, h - bottom);
        g.drawLine(left, 40, left, h - bottom);
        double max = sorted.isEmpty() ? 1 : sorted.get(sorted.size() - 1);
        for (int i = 0; i <= 5; i++) {
            int x = left + (w - 20 - left) * i / 5;
            String label = String.format("%.0f ms", max * i / 5);
            int width = g.getFontMetrics().stringWidth(label);
            g.drawString(label, Math.min(x - width / 2, w - width - 2), h - bottom + 20); // the last one stays inside
            int y = h - bottom - (h - bottom - 40) * i / 5;
            g.drawString(i * 20 + "%", 20, y + 5);
        }
        g.setColor(new Color(0, 90, 180));
        g.setStroke(new BasicStroke(2f));
        int px = left;
        int py = h - bottom;
        for (int i = 0; i < sorted.size(); i++) {
            int x = left + (int) ((w - 20 - left) * sorted.get(i) / max);
            int y = h - bottom - (int) ((h - bottom - 40) * (i + 1.0) / sorted.size());
            g.drawLine(px, py, x, y);
            px = x;
            py = y;
        }
        g.dispose();
        ImageIO.write(image, "png", file.toFile());
    }
}
