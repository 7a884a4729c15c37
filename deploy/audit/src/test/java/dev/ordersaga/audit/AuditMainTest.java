package dev.ordersaga.audit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The exit codes of the command where no stack is needed: usage, help, the report, an unreachable database. */
class AuditMainTest {

    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();

    int run(String... args) {
        return AuditMain.run(args, Map.of(), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void aUsageErrorExitsTwoWithTheReasonAndTheUsage() {
        assertThat(run()).isEqualTo(AuditMain.ERROR);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("audit: give the scope").contains("usage: deploy/audit.sh");
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    }

    @Test
    void helpExitsZero() {
        assertThat(run("--help")).isEqualTo(AuditMain.OK);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--since <instant>");
    }

    @Test
    void aReferenceIsAnOrderIdOnlyAsTheServicesSpellIt() {
        java.util.UUID id = java.util.UUID.randomUUID();
        assertThat(Checks.orderId(id.toString())).contains(id);
        assertThat(Checks.orderId("1-1-1-1-1")).isEmpty();
        assertThat(Checks.orderId(id.toString().toUpperCase())).isEmpty();
        assertThat(Checks.orderId("manual-test")).isEmpty();
        assertThat(Checks.orderId(null)).isEmpty();
    }

    @Test
    void violationsExitOneEvenWhenTheJsonReportCannotBeWritten(@TempDir Path temp) throws Exception {
        // a file where the report's folder should be
        Path blocked = Files.createFile(temp.resolve("taken")).resolve("audit.json");
        World violated = new World();
        violated.replaceOrder(violated.waitingForOperator(), o -> o.withWaitingReason(null));
        PrintStream toOut = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream toErr = new PrintStream(err, true, StandardCharsets.UTF_8);

        assertThat(AuditMain.report(violated.audit(), blocked, toOut, toErr)).isEqualTo(AuditMain.VIOLATIONS);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("FAILED: 1 violation(s)");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("audit: cannot write the JSON report to " + blocked);

        assertThat(AuditMain.report(new World().everyKind().audit(), blocked, toOut, toErr))
                .as("clean, but the report asked for is missing").isEqualTo(AuditMain.ERROR);
        Path written = temp.resolve("reports/audit.json");
        assertThat(AuditMain.report(new World().everyKind().audit(), written, toOut, toErr)).isEqualTo(AuditMain.OK);
        assertThat(written).content().contains("\"ok\"");
    }

    @Test
    void anUnreachableDatabaseExitsTwo() throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        assertThat(run("--since", "2026-01-31T10:15:00Z", "--pg-port", Integer.toString(port))).isEqualTo(AuditMain.ERROR);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("audit: cannot read order_db at 127.0.0.1:" + port);
    }
}
