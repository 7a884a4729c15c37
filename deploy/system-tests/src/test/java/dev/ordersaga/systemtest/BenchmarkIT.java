package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the saga benchmark. In the suite it is a short run that only shows the benchmark works and writes its
 * figures (no speed is asserted: speed is measured, not tested); {@code deploy/bench.sh} runs the real one.
 */
class BenchmarkIT {

    private static final String[] SERVICES =
            {"order-service", "inventory-service", "payment-service", "shipping-service"};

    @Test
    void benchmarkRunsAndWritesItsFigures() throws Exception {
        Path out = Path.of(System.getProperty("saga.bench.out", "target/benchmark"));
        SagaBenchmark.Settings settings = new SagaBenchmark.Settings(
                Integer.getInteger("saga.bench.warmup-orders", 20),
                Integer.getInteger("saga.bench.warmup-round", 10),
                Double.parseDouble(System.getProperty("saga.bench.warmup-quiet-cores", "0.05")),
                Integer.getInteger("saga.bench.saturation-orders", 100),
                Integer.getInteger("saga.bench.concurrency", 16),
                Double.parseDouble(System.getProperty("saga.bench.open-loop-rate", "0")),
                Integer.getInteger("saga.bench.open-loop-warmup-seconds", 2),
                Integer.getInteger("saga.bench.open-loop-warmup-max-seconds", 4),
                Integer.getInteger("saga.bench.open-loop-seconds", 5),
                Integer.getInteger("saga.bench.pgbench-seconds", 3),
                Boolean.getBoolean("saga.bench.require-durable"),
                out);
        try (SagaSystem saga = SagaSystem.start("bench", Map.of())) {
            new SagaBenchmark(saga, settings).run();
        }
        JsonNode figures = new ObjectMapper().readTree(out.resolve("benchmark.json").toFile());
        assertThat(figures.at("/saturation/confirmedSagasPerSecond").asDouble()).isPositive();
        // the warm-up stopped at the first quiet round of the JIT or at its most orders, whichever came first
        int warmupOrders = figures.at("/services/warmupOrders").asInt();
        assertThat(figures.at("/services/warmupRounds").asInt()).isPositive();
        assertThat(warmupOrders).isPositive().isLessThanOrEqualTo(settings.warmupOrders());
        if (warmupOrders < settings.warmupOrders()) {
            assertThat(figures.at("/services/warmupEndedQuiet").asBoolean()).isTrue();
        }
        // the open loop's unmeasured slices likewise, and at least one ran
        int openWarmupSeconds = figures.at("/openLoop/warmupSeconds").asInt();
        assertThat(openWarmupSeconds).isPositive().isLessThanOrEqualTo(settings.openLoopWarmupMaxSeconds());
        if (openWarmupSeconds < settings.openLoopWarmupMaxSeconds()) {
            assertThat(figures.at("/openLoop/warmupEndedQuiet").asBoolean()).isTrue();
        }
        assertThat(figures.at("/openLoop/postToConfirmedMillis/p99").isNumber()).isTrue();
        assertThat(figures.at("/commitToConsumerMillis/p50").isNumber()).isTrue();
        assertThat(figures.at("/databaseCommitsPerSaga").asDouble()).isPositive();
        assertThat(figures.at("/openLoop/databaseCommitsPerSaga").asDouble()).isPositive();
        assertThat(figures.at("/walPerSaga/kiB").asDouble()).isPositive();
        assertThat(figures.at("/openLoop/cpuSecondsPerSaga").asDouble()).isPositive();
        assertThat(figures.at("/physicalLimit/sagasPerSecond").asDouble()).isPositive();
        // the CPU behind the ratio: pgbench's steps and a saga both cost some, and the services are a part of a saga's
        assertThat(figures.at("/physicalLimit/pgbenchCpuMillisPerStep").asDouble()).isPositive();
        double sagaCpu = figures.at("/physicalLimit/machineCpuMillisPerSaga").asDouble();
        assertThat(figures.at("/physicalLimit/servicesCpuMillisPerSaga").asDouble()).isPositive().isLessThan(sagaCpu);
        assertThat(figures.at("/physicalLimit/ratioIfServicesTookNoCpu").asDouble())
                .isGreaterThan(figures.at("/physicalLimit/ourRatio").asDouble());
        // every service sent statements during saturation: at least an inbox claim and a commit per saga
        for (String service : new String[]{"order", "inventory", "payment", "shipping"}) {
            assertThat(figures.at("/statementsPerSaga/" + service + "/statements").asDouble()).as(service)
                    .isGreaterThanOrEqualTo(2);
        }
        // PostgreSQL's CPU went to the services' sessions, and its walsenders decoded the log for the relays
        assertThat(figures.at("/postgresCpuMillisPerSagaByKind/service sessions").asDouble()).isPositive();
        assertThat(figures.at("/postgresCpuMillisPerSagaByKind/walsenders").asDouble()).isPositive();
        assertThat(figures.at("/openLoopPostgresCpuMillisPerSagaByKind/service sessions").asDouble()).isPositive();
        // every service's CPU is read in both phases, so that the open loop's dearer saga can be told whose, and idle
        for (String service : SERVICES) {
            for (String phase : new String[]{"saturation", "openLoop"}) {
                assertThat(figures.at("/cpuMillisPerSagaByProcess/" + phase + "/" + service).asDouble())
                        .as(phase + " " + service).isPositive();
            }
            JsonNode idle = figures.at("/idleStackCoresByProcess/" + service);
            assertThat(idle.isNumber()).as("idle " + service).isTrue();
            assertThat(idle.asDouble()).as("idle " + service).isBetween(0.0, 2.0);
        }
        // the compiler threads of every service are found and read; freshly started, the stack compiled in the warm-up
        double warmupJit = 0;
        for (String service : SERVICES) {
            JsonNode seconds = figures.at("/jitCompilerCpuSeconds/warmup/" + service);
            assertThat(seconds.isNumber()).as(service).isTrue();
            assertThat(figures.at("/jitCompilerCpuSeconds/openLoop/" + service).isNumber()).as(service).isTrue();
            warmupJit += seconds.asDouble();
        }
        assertThat(warmupJit).isPositive();
        // the stack worked during saturation, and no figure of the machine's load exceeds its cores
        double cores = figures.at("/machine/cores").asDouble();
        assertThat(figures.at("/machineLoad/saturation/stackCores").asDouble()).isPositive();
        assertThat(figures.at("/machineLoad/saturation/coresBusy").asDouble()).isPositive().isLessThanOrEqualTo(cores + 0.05);
        assertThat(figures.at("/machineLoad/openLoop/loadGeneratorCores").asDouble()).isPositive();
        assertThat(figures.at("/machineLoad/openLoop/stealShare").asDouble()).isBetween(0.0, 1.0);
        assertThat(Files.size(out.resolve("latency.png"))).isPositive();
        assertThat(Files.readString(out.resolve("summary.txt"))).contains("confirmed sagas/s");
    }
}
