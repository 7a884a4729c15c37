package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ordersaga.testing.TestStack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One service of the system, started from its packaged jar as a separate JVM, as in production: it can be
 * stopped gracefully or killed with SIGKILL.
 */
final class ServiceProcess implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();
    /** Logs written by this JVM: a process started again under the same name appends to its log, so that a run's
     *  log holds what the instance wrote before a crash as well as after its restart. */
    private static final Set<Path> LOGS_STARTED = ConcurrentHashMap.newKeySet();

    static {
        // a failing test must not leave a service behind that answers the next test on the same port
        Runtime.getRuntime().addShutdownHook(new Thread(() -> STARTED.forEach(Process::destroyForcibly)));
    }
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    /**
     * What payment-service checks the provider's webhooks against (and SagaSystem's provider sandbox signs them with):
     * new for each test JVM, and handed over in the environment, as a Kubernetes Secret is.
     */
    static final String WEBHOOK_SECRET = UUID.randomUUID().toString();
    /**
     * The password of the account "operator", which the tests call the operator endpoints with (SagaSystem,
     * EveryServiceRelaysIT): a packaged service has no account unless its configuration gives it one, as the file of
     * Kubernetes' Secret order-saga-operators does.
     */
    static final String OPERATOR_PASSWORD = "operator";
    /** The file every service reads its operator accounts from unless a test hands it another (QUARKUS_CONFIG_LOCATIONS). */
    private static Path operatorAccounts;

    private final String name;
    private final int port;
    private final Path log;
    private final Process process;

    private ServiceProcess(String name, int port, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.log = log;
        this.process = process;
    }

    /**
     * @param module     the service's Maven module, e.g. "order-service"
     * @param instance   a name for this process (its log file)
     * @param properties system properties that override the service's configuration
     */
    static ServiceProcess start(String module, String instance, int port, Map<String, String> properties) throws IOException {
        return start(module, instance, port, properties, Map.of());
    }

    /** @param environment variables added to the process's environment, as a Deployment's {@code env} sets them */
    static ServiceProcess start(String module, String instance, int port, Map<String, String> properties,
                                Map<String, String> environment) throws IOException {
        Path root = RepoRoot.path();
        Path jar = root.resolve(module).resolve("target/quarkus-app/quarkus-run.jar");
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: package the services first (./mvnw package)");
        }
        requireFreePort(port);
        requireFreePort(managementPort(port));
        Path logs = Path.of("target", "system-test-logs");
        Files.createDirectories(logs);
        Path log = logs.resolve(instance + ".log");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions(instance));
        command.addAll(List.of(
                // the loopback, where the tests call it: a packaged Quarkus listens on every interface otherwise
                "-Dquarkus.http.host=127.0.0.1",
                "-Dquarkus.http.port=" + port,
                "-Dquarkus.management.host=127.0.0.1",
                "-Dquarkus.management.port=" + managementPort(port),
                "-DPG_HOST=" + TestStack.postgresHost(),
                "-DPG_PORT=" + TestStack.postgresPort(),
                "-Dkafka.bootstrap.servers=" + TestStack.kafkaBootstrap()));
        properties.forEach((key, value) -> command.add("-D" + key + "=" + value));
        command.add("-jar");
        command.add(jar.toAbsolutePath().toString());
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(logRedirect(log));
        builder.environment().put("PAYMENT_PROVIDER_WEBHOOK_SECRET", WEBHOOK_SECRET);
        builder.environment().put("QUARKUS_CONFIG_LOCATIONS", defaultOperatorAccounts().toAbsolutePath().toString());
        // a packaged service has no default; the local stack's role of each service has its own name as password
        builder.environment().put("DB_PASSWORD", module.replace("-service", "") + "_svc");
        builder.environment().putAll(environment);
        Process process = builder.start();
        STARTED.add(process);
        return new ServiceProcess(instance, port, log, process);
    }

    /**
     * Starts a service that must refuse to start: it exits with an error, its log tells why ({@code because}), and it
     * never opened its port.
     */
    static void assertRefusesToStart(String module, String instance, int port, Map<String, String> properties,
                                     Map<String, String> environment, String because) throws IOException, InterruptedException {
        try (ServiceProcess service = start(module, instance, port, properties, environment)) {
            assertThat(service.awaitExit(Duration.ofSeconds(90))).as(instance + "'s exit code").isNotZero();
            assertThat(service.logContains(because)).as(instance + "'s log says: " + because).isTrue();
            assertThat(service.logLineOf("Listening on")).as(instance + " never listened").isNegative();
            // a refusal comes before the service's work begins, not after its scheduled tasks have failed a few times
            assertThat(service.logLineOf("Error occurred while executing task")).as(instance + " ran no scheduled task")
                    .isNegative();
        }
    }

    /**
     * A file of operator accounts, as the services read it (QUARKUS_CONFIG_LOCATIONS), made by the script operators use
     * (deploy/operator-account.sh), so that what it prints is what the services accept.
     *
     * @param passwords each account's name and password
     */
    static Path operatorAccounts(String file, Map<String, String> passwords) throws IOException, InterruptedException {
        Path root = RepoRoot.path();
        StringBuilder accounts = new StringBuilder();
        for (Map.Entry<String, String> account : passwords.entrySet()) {
            Process script = new ProcessBuilder("bash", root.resolve("deploy/operator-account.sh").toString(), account.getKey())
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            try (var stdin = script.getOutputStream()) {
                stdin.write(account.getValue().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            String printed = new String(script.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            if (script.waitFor() != 0) {
                throw new IllegalStateException("operator-account.sh " + account.getKey() + " exited with " + script.exitValue());
            }
            accounts.append(printed);
        }
        Path path = Path.of("target", file);
        Files.createDirectories(path.getParent());
        Files.writeString(path, accounts);
        return path;
    }

    private static synchronized Path defaultOperatorAccounts() throws IOException {
        if (operatorAccounts == null) {
            try {
                operatorAccounts = operatorAccounts("operators.properties", Map.of("operator", OPERATOR_PASSWORD));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while making the operator accounts", e);
            }
        }
        return operatorAccounts;
    }

    /**
     * The tests' default trades peak speed for a fast start (C1 only): most system tests start and stop services
     * many times. The benchmark runs the services as production would (saga.service.jvm-options, where
     * {instance} becomes the process's name, e.g. for a flight recording per process).
     */
    private static List<String> jvmOptions(String instance) {
        String options = System.getProperty("saga.service.jvm-options", "-Xmx256m -XX:TieredStopAtLevel=1");
        List<String> result = new ArrayList<>();
        for (String option : options.trim().split("\\s+")) {
            if (!option.isEmpty()) {
                result.add(option.replace("{instance}", instance));
            }
        }
        return result;
    }

    private static ProcessBuilder.Redirect logRedirect(Path log) {
        return LOGS_STARTED.add(log.toAbsolutePath()) ? ProcessBuilder.Redirect.to(log.toFile())
                : ProcessBuilder.Redirect.appendTo(log.toFile());
    }

    private static void requireFreePort(int port) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress("0.0.0.0", port));
        } catch (IOException e) {
            throw new IOException("port " + port + " is taken: a service left over from another run? (" + e.getMessage() + ")", e);
        }
    }

    /** A plain executable jar (the sandboxes): ready when its port answers. */
    static ServiceProcess startJar(String jarPath, String instance, int port, List<String> args) throws IOException {
        Path root = RepoRoot.path();
        Path jar = root.resolve(jarPath);
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: package it first (./mvnw package)");
        }
        requireFreePort(port);
        Path logs = Path.of("target", "system-test-logs");
        Files.createDirectories(logs);
        Path log = logs.resolve(instance + ".log");
        // The sandboxes stand in for providers on machines of their own. With the JVM's default JIT their C2
        // compiler threads took up to a third of a core in bursts, minutes into a benchmark, and every burst showed
        // as a latency spike of the system under test; C1 alone and the serial collector keep them out of its way.
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-jar", jar.toAbsolutePath().toString()));
        command.addAll(args);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(logRedirect(log)).start();
        STARTED.add(process);
        ServiceProcess started = new ServiceProcess(instance, port, log, process);
        await(instance + " listening").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(instance + " exited with " + process.exitValue() + "; see " + log);
            }
            return started.listening();
        });
        return started;
    }

    ServiceProcess awaitReady() {
        await(name + " ready").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + "; see " + log);
            }
            return health() != null;
        });
        return this;
    }

    /** The readiness document, or null while the service is not ready. */
    JsonNode health() {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(managementUrl() + "/q/health/ready"))
                    .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? JSON.readTree(response.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** STREAMING, STANDBY, ... as the service reports it, or "UNKNOWN" while it does not answer. */
    String relayRole() {
        JsonNode health = health();
        if (health == null) {
            return "UNKNOWN";
        }
        for (JsonNode check : health.path("checks")) {
            if ("cdc-relay".equals(check.path("name").asText())) {
                return check.path("data").path("role").asText();
            }
        }
        return "UNKNOWN";
    }

    ServiceProcess awaitRelayRole(String role, Duration timeout) {
        await(name + " relay " + role).atMost(timeout).pollInterval(Duration.ofMillis(100))
                .until(() -> role.equals(relayRole()));
        return this;
    }

    boolean logContains(String text) throws IOException {
        return Files.readString(log).contains(text);
    }

    /** The number of the first log line that contains the text, from 0; -1 if none does. */
    int logLineOf(String text) throws IOException {
        List<String> lines = Files.readAllLines(log);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    /** Whether the process accepts connections on its port: HTTP is up, whether or not the service is ready. */
    boolean listening() {
        try (java.net.Socket socket = new java.net.Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    String name() {
        return name;
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    /** Where a service serves /q/ (health, metrics): Quarkus' management interface, on a port of its own. */
    String managementUrl() {
        return "http://127.0.0.1:" + managementPort(port);
    }

    /** A service's management port: its HTTP port + 1000 (18181 → 19181), as the local run's 8081 → 9081. */
    static int managementPort(int port) {
        return port + 1000;
    }

    long pid() {
        return process.pid();
    }

    /** The exit code of a process that ends by itself (a start that fails), once it has; fails if it outlives the timeout. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(name + " still runs after " + timeout);
        }
        STARTED.remove(process);
        return process.exitValue();
    }

    /**
     * SIGKILL: no shutdown hook, no offset flush, no goodbye to PostgreSQL or Kafka. Fails if the process had ended
     * before it (a service that died by itself would otherwise pass for one the fault killed).
     */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " survived SIGKILL for 30 s");
        }
        STARTED.remove(process);
        // 128 + the signal's number, as a shell reports a process a signal ended
        if (process.exitValue() != 128 + 9) {
            throw new IllegalStateException(name + " was not running when killed: it had exited with " + process.exitValue());
        }
    }

    /** SIGTERM: the service shuts down as it would on a rolling update. */
    void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(name + " did not stop within 60 s");
        }
        STARTED.remove(process);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop();
        }
    }
}
