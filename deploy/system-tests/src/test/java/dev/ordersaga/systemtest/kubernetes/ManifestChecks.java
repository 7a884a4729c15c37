package dev.ordersaga.systemtest.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.MissingNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.ordersaga.systemtest.kubernetes.Rendered.containers;
import static dev.ordersaga.systemtest.kubernetes.Rendered.describe;
import static dev.ordersaga.systemtest.kubernetes.Rendered.list;
import static dev.ordersaga.systemtest.kubernetes.Rendered.name;

/**
 * What a rendered overlay must hold. Each check returns the problems it found, one readable line each; none means
 * the check passed. KubernetesManifestsTest runs them on the real overlays and on broken copies of them.
 */
final class ManifestChecks {

    /** The four services; each runs as the Deployment, Service and PodDisruptionBudget "<name>-service". */
    static final List<String> SERVICES = List.of("order", "inventory", "payment", "shipping");

    /** PostgreSQL's own defaults, where the Cluster sets nothing. */
    private static final int POSTGRES_DEFAULT_MAX_CONNECTIONS = 100;
    private static final int SUPERUSER_RESERVED = 3;
    /** quarkus.datasource.jdbc.max-size's default, from DB_POOL_MAX (common-events' microprofile-config.properties). */
    private static final int DEFAULT_POOL_MAX = 20;
    /** Every replica's relay holds its lock's session, streaming or standing by. */
    private static final int RELAY_LOCK_SESSIONS = 1;
    /**
     * The streaming relay's other sessions (pg_stat_activity of a running service): its replication connection,
     * Debezium's three (its own, its bean registry's, its heartbeat's) and the offset store's. One replica of a service
     * streams; they count twice, since the sessions of a relay that lost the lock linger while another takes over.
     */
    private static final int STREAMING_RELAY_SESSIONS = 5;

    /*
     * A service's graceful stop, in the order Quarkus runs it after SIGTERM: readiness DOWN and the shutdown delay
     * (quarkus.shutdown.delay), the wait for requests under way (quarkus.shutdown.timeout, if set), then the
     * ShutdownEvent observers one after another, then the beans' @PreDestroy and the channels' close.
     */
    /**
     * CdcRelay.onStop joins the relay's supervisor for up to 30 s. The engine's close (up to 30 s) and the producer's
     * (10 s) run on that thread, inside the join: what is left when the join gives up ends with the JVM, which halts
     * once the shutdown hook returns.
     */
    private static final Duration RELAY_STOP = Duration.ofSeconds(30);
    /**
     * ProviderCalls.stop (common-events) awaits the calls under way for up to 10 s, each of a service's runtimes of
     * them in turn: its worker's and its surpluses' (Surpluses.stop).
     */
    private static final Duration PROVIDER_CALLS_STOP = Duration.ofSeconds(10);
    /**
     * The services whose ShutdownEvent stops provider calls: the worker (PaymentWorker.onShutdown, ShipmentWorker.stop)
     * and the surpluses' undoing (SurplusRefunds.onShutdown, SurplusCancels.onShutdown).
     */
    private static final Set<String> WITH_PROVIDER_CALLS = Set.of("payment", "shipping");
    /** DeadLetters.close (@PreDestroy, common-events) closes its producer within 5 s. */
    private static final Duration DEAD_LETTERS_CLOSE = Duration.ofSeconds(5);
    /** SmallRye Kafka's ReactiveKafkaConsumer.close awaits twice the channel's default.api.timeout.ms, 1 s unless set. */
    private static final Duration CONSUMER_CLOSE = Duration.ofSeconds(2);
    /** Kubernetes' terminationGracePeriodSeconds where the pod sets none. */
    private static final int DEFAULT_GRACE_PERIOD_SECONDS = 30;
    /** Below this a drain may end before kube-proxy and the ingress controllers have dropped the pod's endpoint. */
    private static final Duration MIN_SHUTDOWN_DELAY = Duration.ofSeconds(5);
    /** quarkus.datasource.jdbc.acquisition-timeout's default (quarkus-agroal's DataSourceJdbcRuntimeConfig, 5S). */
    private static final Duration DEFAULT_ACQUISITION_TIMEOUT = Duration.ofSeconds(5);
    /** eventing.inbox.retention's default (InboxPruner, common-events). */
    private static final Duration DEFAULT_INBOX_RETENTION = Duration.ofDays(8);
    /** Kafka's log.retention.hours and log.roll.hours where the broker sets neither they nor a finer unit. */
    private static final Duration KAFKA_DEFAULT_RETENTION = Duration.ofHours(168);
    private static final Duration KAFKA_DEFAULT_ROLL = Duration.ofHours(168);
    /** Kubernetes' probe timeoutSeconds where a probe sets none. */
    private static final int DEFAULT_PROBE_TIMEOUT_SECONDS = 1;

    static final String READY_PATH = "/q/health/ready";
    static final String LIVE_PATH = "/q/health/live";
    static final int SERVICE_PORT = 8080;
    /** Where a service serves /q/ (MANAGEMENT_PORT): its probes go there, its Service does not. */
    static final int MANAGEMENT_PORT = 9000;
    /** The pod label `kubectl logs -l app.kubernetes.io/part-of=order-saga` follows a saga by (README). */
    static final String PART_OF = "app.kubernetes.io/part-of";
    private static final int POSTGRES_PORT = 5432;
    /** CloudNativePG's instance manager: the operator reads each instance's status there. */
    private static final int INSTANCE_STATUS_PORT = 8000;
    /** The node label a spread across nodes is over. */
    static final String HOSTNAME = "kubernetes.io/hostname";

    private static final Pattern EXPRESSION = Pattern.compile("\\$\\{([^:}]+)(?::([^}]*))?}");
    private static final Pattern JDBC_URL = Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?/([^?]+)(\\?.*)?");

    private ManifestChecks() {
    }

    // ---------------------------------------------------------------------------------------------- workloads

    /**
     * Both probes on every container; the services' on their SmallRye Health endpoints, at the container's management
     * port, where Quarkus' management interface serves them (the API's port answers them with 404).
     */
    static List<String> probes(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            boolean sagaService = isSagaService(deployment);
            for (JsonNode container : list(deployment.at("/spec/template/spec/containers"))) {
                String where = where(deployment, container);
                checkProbe(problems, where, container, "readinessProbe", sagaService ? READY_PATH : null);
                checkProbe(problems, where, container, "livenessProbe", sagaService ? LIVE_PATH : null);
                if (!sagaService) {
                    continue;
                }
                if (!resolve(rendered, env(deployment).get("MANAGEMENT_PORT")).equals(Optional.of(String.valueOf(MANAGEMENT_PORT)))) {
                    problems.add(where + ": MANAGEMENT_PORT is not " + MANAGEMENT_PORT + ", where the probes go");
                }
                for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
                    JsonNode port = container.path(probe).at("/httpGet/port");
                    if (!port.isMissingNode() && !containerPort(container, port).equals(Optional.of(MANAGEMENT_PORT))) {
                        problems.add(where + ": " + probe + " on port " + port.asText() + ", but health is served on the "
                                + "management port " + MANAGEMENT_PORT);
                    }
                }
            }
        }
        return problems;
    }

    private static void checkProbe(List<String> problems, String where, JsonNode container, String probe, String path) {
        JsonNode spec = container.path(probe);
        if (!spec.isObject()) {
            problems.add(where + ": no " + probe);
            return;
        }
        if (path == null) {
            if (!(spec.has("httpGet") || spec.has("tcpSocket") || spec.has("exec") || spec.has("grpc"))) {
                problems.add(where + ": " + probe + " has no handler (httpGet, tcpSocket, exec or grpc)");
            }
            return;
        }
        JsonNode httpGet = spec.path("httpGet");
        if (!path.equals(httpGet.path("path").asText())) {
            problems.add(where + ": " + probe + " is not GET " + path + " (found " + spec + ")");
        } else if (containerPort(container, httpGet.path("port")).isEmpty()) {
            problems.add(where + ": " + probe + " port " + httpGet.path("port") + " is none of the container's ports");
        }
    }

    /**
     * Every service drains before its HTTP server closes: Quarkus' shutdown delay is built in and its Deployment sets
     * one long enough for kube-proxy and the ingress to stop routing to the pod.
     */
    static List<String> shutdownDelays(Rendered rendered, Map<String, ServiceConfig> configs) {
        List<String> problems = new ArrayList<>();
        forEachService(rendered, configs, (deployment, config) -> {
            String where = describe(deployment);
            if (!config.get("quarkus.shutdown.delay-enabled").map(Boolean::parseBoolean).orElse(false)) {
                problems.add(where + ": the service is built without quarkus.shutdown.delay-enabled=true, so no "
                        + "shutdown delay is ever applied");
            }
            Optional<String> delay = setting(rendered, deployment, config, "quarkus.shutdown.delay");
            if (delay.isEmpty()) {
                problems.add(where + ": no shutdown delay (QUARKUS_SHUTDOWN_DELAY): HTTP closes while kube-proxy and "
                        + "the ingress may still route to the pod");
            } else {
                durationOf(delay.get()).ifPresentOrElse(d -> {
                    if (d.compareTo(MIN_SHUTDOWN_DELAY) < 0) {
                        problems.add(where + ": shutdown delay " + seconds(d) + " is under " + seconds(MIN_SHUTDOWN_DELAY)
                                + ", too short for kube-proxy and the ingress to stop routing to the pod");
                    }
                }, () -> problems.add(where + ": shutdown delay '" + delay.get() + "' is not a duration"));
            }
        });
        return problems;
    }

    /** Every service's grace period outlasts its slowest graceful stop, so that no stop is cut short by SIGKILL. */
    static List<String> gracePeriods(Rendered rendered, Map<String, ServiceConfig> configs) {
        List<String> problems = new ArrayList<>();
        forEachService(rendered, configs, (deployment, config) -> {
            Map<String, Duration> stop = slowestStop(rendered, deployment, config);
            Duration total = stop.values().stream().reduce(Duration.ZERO, Duration::plus);
            int grace = deployment.at("/spec/template/spec/terminationGracePeriodSeconds")
                    .asInt(DEFAULT_GRACE_PERIOD_SECONDS);
            if (Duration.ofSeconds(grace).compareTo(total) < 0) {
                List<String> parts = new ArrayList<>();
                stop.forEach((part, duration) -> parts.add(part + " " + seconds(duration)));
                problems.add(describe(deployment) + ": terminationGracePeriodSeconds " + grace + " is shorter than its "
                        + "slowest graceful stop, " + seconds(total) + " (" + String.join(", ", parts) + ")");
            }
        });
        return problems;
    }

    /** The parts of a service's slowest graceful stop, in the order they run (see RELAY_STOP and what follows it). */
    static Map<String, Duration> slowestStop(Rendered rendered, JsonNode deployment, ServiceConfig config) {
        Map<String, Duration> stop = new LinkedHashMap<>();
        stop.put("shutdown delay", runtimeDuration(rendered, deployment, config, "quarkus.shutdown.delay"));
        Duration timeout = runtimeDuration(rendered, deployment, config, "quarkus.shutdown.timeout");
        if (!timeout.isZero()) {
            stop.put("shutdown timeout", timeout);
        }
        stop.put("relay", RELAY_STOP);
        if (WITH_PROVIDER_CALLS.contains(config.service())) {
            stop.put("provider calls", PROVIDER_CALLS_STOP);
            stop.put("surpluses' calls", PROVIDER_CALLS_STOP);
        }
        stop.put("Kafka consumer", CONSUMER_CLOSE);
        stop.put("dead letters' producer", DEAD_LETTERS_CLOSE);
        return stop;
    }

    /**
     * Every service's readiness probe waits longer than its database check may wait for a pooled connection: a probe
     * that gives up sooner takes a busy, healthy pod out of its Service whenever the pool is saturated.
     */
    static List<String> readinessTimeouts(Rendered rendered, Map<String, ServiceConfig> configs) {
        List<String> problems = new ArrayList<>();
        forEachService(rendered, configs, (deployment, config) -> {
            Duration acquisition = setting(rendered, deployment, config, "quarkus.datasource.jdbc.acquisition-timeout")
                    .flatMap(ManifestChecks::durationOf)
                    .orElse(DEFAULT_ACQUISITION_TIMEOUT);
            for (JsonNode container : list(deployment.at("/spec/template/spec/containers"))) {
                JsonNode probe = container.path("readinessProbe");
                if (!probe.isObject()) {
                    continue;
                }
                int timeout = probe.path("timeoutSeconds").asInt(DEFAULT_PROBE_TIMEOUT_SECONDS);
                if (Duration.ofSeconds(timeout).compareTo(acquisition) <= 0) {
                    problems.add(where(deployment, container) + ": readinessProbe timeoutSeconds " + timeout + " is not "
                            + "above the datasource's acquisition timeout, " + seconds(acquisition)
                            + ", so a saturated pool takes the pod out of its Service");
                }
            }
        });
        return problems;
    }

    private static void forEachService(Rendered rendered, Map<String, ServiceConfig> configs,
                                       BiConsumer<JsonNode, ServiceConfig> check) {
        for (String service : SERVICES) {
            rendered.find("Deployment", service + "-service").ifPresent(deployment -> check.accept(deployment,
                    Optional.ofNullable(configs.get(service))
                            .orElseThrow(() -> new IllegalArgumentException("no configuration of " + service))));
        }
    }

    /**
     * The replicas of every service on different nodes, strictly: a topologySpreadConstraint of maxSkew 1 across
     * kubernetes.io/hostname that selects the service's pods and leaves a pod that would break it unscheduled
     * (DoNotSchedule). A soft one (ScheduleAnyway) lets the scheduler put both replicas on one node, whose loss then
     * takes the service down. Cordoned nodes are left out of the count (nodeTaintsPolicy Honor): counted, a node being
     * drained holds no replica, and on two nodes the replica it evicted could be placed nowhere.
     */
    static List<String> nodeSpread(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        for (String service : SERVICES) {
            rendered.find("Deployment", service + "-service").ifPresent(deployment -> {
                JsonNode podLabels = deployment.at("/spec/template/metadata/labels");
                Optional<JsonNode> acrossNodes = list(deployment.at("/spec/template/spec/topologySpreadConstraints"))
                        .stream()
                        .filter(c -> HOSTNAME.equals(c.path("topologyKey").asText())
                                && selects(c.at("/labelSelector/matchLabels"), podLabels))
                        .findFirst();
                String where = describe(deployment);
                if (acrossNodes.isEmpty()) {
                    problems.add(where + ": no topologySpreadConstraint across " + HOSTNAME + " selects its pods, so its "
                            + "replicas may share a node");
                    return;
                }
                JsonNode constraint = acrossNodes.get();
                String when = constraint.path("whenUnsatisfiable").asText("(unset)");
                if (!"DoNotSchedule".equals(when)) {
                    problems.add(where + ": its spread across " + HOSTNAME + " is whenUnsatisfiable " + when
                            + ", not DoNotSchedule, so the scheduler may put its replicas on one node");
                }
                if (constraint.path("maxSkew").asInt(0) != 1) {
                    problems.add(where + ": its spread across " + HOSTNAME + " has maxSkew " + constraint.path("maxSkew")
                            + ", not 1, so its replicas may share a node");
                }
                if (!list(constraint.path("matchLabelKeys")).stream().map(JsonNode::asText).toList()
                        .contains("pod-template-hash")) {
                    problems.add(where + ": its spread across " + HOSTNAME + " counts the old and the new pods of a "
                            + "rolling update together (no matchLabelKeys pod-template-hash), so both new replicas may "
                            + "land on one node");
                }
                if (!"Honor".equals(constraint.path("nodeTaintsPolicy").asText())) {
                    problems.add(where + ": its spread across " + HOSTNAME + " counts cordoned nodes (nodeTaintsPolicy is "
                            + "not Honor), so on two nodes the replica a drain evicts can be placed nowhere");
                }
            });
        }
        return problems;
    }

    /**
     * Kafka's nodes and PostgreSQL's instances each on a Kubernetes node of its own, strictly: two Kafka nodes of three
     * on one machine lose the KRaft quorum with it, and two PostgreSQL standbys on one leave a primary that requires a
     * synchronous standby waiting on every commit. Neither operator spreads them strictly by itself (Strimzi not at all,
     * CloudNativePG only by preference).
     */
    static List<String> statefulSpread(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        for (JsonNode pool : rendered.ofKind("KafkaNodePool")) {
            // the labels Strimzi gives the pool's pods
            JsonNode podLabels = JsonNodeFactory.instance.objectNode()
                    .put("strimzi.io/cluster", pool.at("/metadata/labels/strimzi.io~1cluster").asText())
                    .put("strimzi.io/pool-name", name(pool));
            JsonNode required = pool.at("/spec/template/pod/affinity/podAntiAffinity/"
                    + "requiredDuringSchedulingIgnoredDuringExecution");
            boolean apart = list(required).stream().anyMatch(term -> HOSTNAME.equals(term.path("topologyKey").asText())
                            && selects(term.at("/labelSelector/matchLabels"), podLabels));
            if (pool.at("/spec/replicas").asInt(1) > 1 && !apart) {
                problems.add(describe(pool) + ": no required pod anti-affinity across " + HOSTNAME
                        + " selects its pods, so its nodes may share a machine");
            }
        }
        for (JsonNode cluster : rendered.ofKind("Cluster")) {
            JsonNode affinity = cluster.at("/spec/affinity");
            boolean apart = affinity.path("enablePodAntiAffinity").asBoolean(true)
                    && "required".equals(affinity.path("podAntiAffinityType").asText())
                    && HOSTNAME.equals(affinity.path("topologyKey").asText(HOSTNAME));
            if (cluster.at("/spec/instances").asInt(1) > 1 && !apart) {
                problems.add(describe(cluster) + ": its instances are kept apart across " + HOSTNAME + " only by "
                        + "preference (affinity.podAntiAffinityType is not required), so they may share a machine");
            }
        }
        return problems;
    }

    /** Requests and limits of CPU and memory on every container. */
    static List<String> resources(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            for (JsonNode container : containers(deployment)) {
                for (String kind : List.of("requests", "limits")) {
                    for (String resource : List.of("cpu", "memory")) {
                        if (!container.at("/resources/" + kind + "/" + resource).isValueNode()) {
                            problems.add(where(deployment, container) + ": no resources." + kind + "." + resource);
                        }
                    }
                }
            }
        }
        return problems;
    }

    /**
     * Not root, no privilege escalation, a read-only root filesystem, and an emptyDir at /tmp where the JVM writes its
     * temporary files.
     */
    static List<String> securityContexts(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            JsonNode pod = deployment.at("/spec/template/spec");
            JsonNode podContext = pod.path("securityContext");
            for (JsonNode container : containers(deployment)) {
                String where = where(deployment, container);
                JsonNode context = container.path("securityContext");
                boolean nonRoot = context.has("runAsNonRoot")
                        ? context.path("runAsNonRoot").asBoolean(false)
                        : podContext.path("runAsNonRoot").asBoolean(false);
                if (!nonRoot) {
                    problems.add(where + ": runAsNonRoot is not true");
                }
                JsonNode user = context.has("runAsUser") ? context.path("runAsUser") : podContext.path("runAsUser");
                if (user.isNumber() && user.asLong() == 0) {
                    problems.add(where + ": runAsUser is 0 (root)");
                }
                if (!context.path("readOnlyRootFilesystem").asBoolean(false)) {
                    problems.add(where + ": readOnlyRootFilesystem is not true");
                } else if (!emptyDirAt(pod, container, "/tmp")) {
                    problems.add(where + ": read-only root filesystem without an emptyDir at /tmp for the JVM's files");
                }
                // Kubernetes allows escalation unless told otherwise
                if (context.path("allowPrivilegeEscalation").asBoolean(true)) {
                    problems.add(where + ": allowPrivilegeEscalation is not false");
                }
            }
        }
        return problems;
    }

    private static boolean emptyDirAt(JsonNode pod, JsonNode container, String path) {
        return list(container.path("volumeMounts")).stream()
                .filter(mount -> path.equals(mount.path("mountPath").asText()))
                .map(mount -> mount.path("name").asText())
                .anyMatch(volume -> list(pod.path("volumes")).stream()
                        .anyMatch(v -> volume.equals(v.path("name").asText()) && v.has("emptyDir")));
    }

    // --------------------------------------------------------------------------------------------- references

    /** A ConfigMap or Secret (and key, if any) that an object of the overlay refers to. */
    record Ref(String where, String kind, String name, String key) {
        @Override
        public String toString() {
            return kind + " " + name + (key == null ? "" : " key " + key);
        }
    }

    /**
     * Every ConfigMap and Secret the Deployments read (env valueFrom, envFrom, volumes) and the password Secrets of the
     * CloudNativePG roles.
     */
    static List<Ref> references(Rendered rendered) {
        List<Ref> refs = new ArrayList<>();
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            for (JsonNode container : containers(deployment)) {
                String where = where(deployment, container);
                for (JsonNode env : list(container.path("env"))) {
                    JsonNode from = env.path("valueFrom");
                    String at = where + " env " + env.path("name").asText();
                    addRef(refs, at, "ConfigMap", from.path("configMapKeyRef"), "name", "key");
                    addRef(refs, at, "Secret", from.path("secretKeyRef"), "name", "key");
                }
                for (JsonNode envFrom : list(container.path("envFrom"))) {
                    addRef(refs, where + " envFrom", "ConfigMap", envFrom.path("configMapRef"), "name", null);
                    addRef(refs, where + " envFrom", "Secret", envFrom.path("secretRef"), "name", null);
                }
            }
            for (JsonNode volume : list(deployment.at("/spec/template/spec/volumes"))) {
                String at = describe(deployment) + " volume " + volume.path("name").asText();
                addVolumeRefs(refs, at, "ConfigMap", volume.path("configMap"), "name");
                addVolumeRefs(refs, at, "Secret", volume.path("secret"), "secretName");
                for (JsonNode source : list(volume.at("/projected/sources"))) {
                    addVolumeRefs(refs, at, "ConfigMap", source.path("configMap"), "name");
                    addVolumeRefs(refs, at, "Secret", source.path("secret"), "name");
                }
            }
        }
        for (JsonNode cluster : rendered.ofKind("Cluster")) {
            for (JsonNode role : list(cluster.at("/spec/managed/roles"))) {
                JsonNode secret = role.path("passwordSecret");
                if (secret.isObject()) {
                    String at = describe(cluster) + " role " + role.path("name").asText();
                    refs.add(new Ref(at, "Secret", secret.path("name").asText(), "username"));
                    refs.add(new Ref(at, "Secret", secret.path("name").asText(), "password"));
                }
            }
        }
        return refs;
    }

    private static void addRef(List<Ref> refs, String where, String kind, JsonNode ref, String nameField, String keyField) {
        if (ref.isObject()) {
            refs.add(new Ref(where, kind, ref.path(nameField).asText(), keyField == null ? null : ref.path(keyField).asText()));
        }
    }

    private static void addVolumeRefs(List<Ref> refs, String where, String kind, JsonNode source, String nameField) {
        if (!source.isObject()) {
            return;
        }
        List<JsonNode> items = list(source.path("items"));
        if (items.isEmpty()) {
            refs.add(new Ref(where, kind, source.path(nameField).asText(), null));
        }
        for (JsonNode item : items) {
            refs.add(new Ref(where, kind, source.path(nameField).asText(), item.path("key").asText()));
        }
    }

    /**
     * Every reference resolves: to a ConfigMap or Secret of the rendered overlay that has the key, or, for a Secret,
     * to one the cluster's operator creates (listed in {@code external}, empty where the overlay generates its own) or
     * Strimzi makes: a rendered KafkaUser's credentials, the Kafka's cluster CA certificate; or CloudNativePG: the
     * cluster's server CA.
     */
    static List<String> referencesResolve(Rendered rendered, ExternalSecrets external) {
        List<String> problems = new ArrayList<>();
        for (Ref ref : references(rendered)) {
            Optional<JsonNode> object = rendered.find(ref.kind(), ref.name());
            if (object.isPresent()) {
                if (ref.key() != null && rendered.value(ref.kind(), ref.name(), ref.key()).isEmpty()) {
                    problems.add(ref.where() + ": " + ref + " is rendered without that key");
                }
            } else if (!("Secret".equals(ref.kind()) && (external.provides(ref.name(), ref.key())
                    || madeForAKafkaUser(rendered, ref.name(), ref.key()) || madeForTheKafka(rendered, ref.name(), ref.key())
                    || madeForTheDatabase(rendered, ref.name(), ref.key())))) {
                problems.add(ref.where() + ": " + ref + " is not in the rendered " + rendered.overlay() + " overlay"
                        + (external.isEmpty() ? "" : " nor in " + ExternalSecrets.FILE));
            }
        }
        return problems;
    }

    /**
     * An overlay that leaves the credentials to the cluster's operator renders no Secret, and lists exactly what it
     * refers to: a listed Secret or key that nothing reads is a stale instruction to the operator.
     */
    static List<String> externalSecretsAreExactlyTheReferencedOnes(Rendered rendered, ExternalSecrets external) {
        List<String> problems = new ArrayList<>();
        for (JsonNode secret : rendered.ofKind("Secret")) {
            problems.add(describe(secret) + " is rendered, but this overlay's credentials must come from the cluster ("
                    + ExternalSecrets.FILE + ")");
        }
        Map<String, Set<String>> referenced = new LinkedHashMap<>();
        for (Ref ref : references(rendered)) {
            if ("Secret".equals(ref.kind())) {
                Set<String> keys = referenced.computeIfAbsent(ref.name(), n -> new TreeSet<>());
                if (ref.key() != null) {
                    keys.add(ref.key());
                }
            }
        }
        external.keys().forEach((name, keys) -> {
            Set<String> used = referenced.getOrDefault(name, Set.of());
            if (!referenced.containsKey(name)) {
                problems.add(ExternalSecrets.FILE + " lists Secret " + name + ", which nothing in the overlay refers to");
            } else {
                for (String key : keys) {
                    if (!used.contains(key)) {
                        problems.add(ExternalSecrets.FILE + " lists key " + key + " of Secret " + name + ", which nothing reads");
                    }
                }
            }
        });
        return problems;
    }

    // ------------------------------------------------------------------------------------------------- images

    /**
     * Every image names a tag (or digest) that is not "latest": the workloads' images and the PostgreSQL image of the
     * CloudNativePG cluster. The project's own images (order-saga/*) carry one tag: one release.
     */
    static List<String> images(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        Map<String, String> ownTags = new LinkedHashMap<>();
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            for (JsonNode container : containers(deployment)) {
                String image = container.path("image").asText();
                checkImage(problems, where(deployment, container), image);
                Optional<String> tag = tag(image);
                String path = withoutRegistry(repository(image));
                if (path.startsWith("order-saga/") && tag.isPresent()) {
                    ownTags.put(path, tag.get());
                }
            }
        }
        for (JsonNode cluster : rendered.ofKind("Cluster")) {
            if (cluster.at("/spec/imageName").isTextual()) {
                checkImage(problems, describe(cluster) + " imageName", cluster.at("/spec/imageName").asText());
            }
        }
        if (new TreeSet<>(ownTags.values()).size() > 1) {
            problems.add("the order-saga images carry different tags, so no single release: " + ownTags);
        }
        return problems;
    }

    /**
     * Every workload's image names the registry it is pulled from. An image without a registry host is pulled from
     * Docker Hub, where anyone may publish an order-saga/*: the dev overlay's images are loaded into the cluster
     * (kind load), prod's must come from the registry its kustomization names.
     */
    static List<String> registries(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            for (JsonNode container : containers(deployment)) {
                String image = container.path("image").asText();
                if (registry(image).isEmpty()) {
                    problems.add(where(deployment, container) + ": image " + image + " names no registry, so it is "
                            + "pulled from Docker Hub");
                }
            }
        }
        return problems;
    }

    /**
     * The registry host of an image, read as the container runtimes read it: the part before the first '/', if it has
     * a '.' or a ':' (a port) or is localhost; otherwise the whole name is a path on Docker Hub.
     */
    static Optional<String> registry(String image) {
        int slash = image.indexOf('/');
        if (slash < 0) {
            return Optional.empty();
        }
        String first = image.substring(0, slash);
        return first.contains(".") || first.contains(":") || "localhost".equals(first)
                ? Optional.of(first) : Optional.empty();
    }

    private static String withoutRegistry(String image) {
        return registry(image).map(host -> image.substring(host.length() + 1)).orElse(image);
    }

    private static void checkImage(List<String> problems, String where, String image) {
        if (image.isEmpty()) {
            problems.add(where + ": no image");
        } else if (image.contains("@sha256:")) {
            return;
        } else if (tag(image).isEmpty()) {
            problems.add(where + ": image " + image + " has no tag");
        } else if ("latest".equals(tag(image).get())) {
            problems.add(where + ": image " + image + " is tagged latest");
        }
    }

    /** A PostgreSQL time setting in seconds: a number with ms, s, min, h or d, or milliseconds without a unit. */
    static double seconds(String setting) {
        Matcher m = Pattern.compile("\\s*(\\d+)\\s*(ms|s|min|h|d)?\\s*").matcher(setting);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PostgreSQL time: " + setting);
        }
        double value = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "ms" : m.group(2);
        return switch (unit) {
            case "ms" -> value / 1000;
            case "s" -> value;
            case "min" -> value * 60;
            case "h" -> value * 3600;
            default -> value * 86400;
        };
    }

    private static Optional<String> tag(String image) {
        int colon = image.lastIndexOf(':');
        return colon > image.lastIndexOf('/') ? Optional.of(image.substring(colon + 1)) : Optional.empty();
    }

    private static String repository(String image) {
        int colon = image.lastIndexOf(':');
        return colon > image.lastIndexOf('/') ? image.substring(0, colon) : image;
    }

    // ------------------------------------------------------------------------------------------ Kafka, topics

    /**
     * One KafkaTopic per topic the services use, and no other; the partitions as deploy/stack/topics.txt has them (the
     * local stack creates its topics from that file); each topic belongs to the rendered Kafka cluster.
     */
    static List<String> topics(Rendered rendered, Collection<String> serviceTopics, Map<String, Integer> topicsFile) {
        List<String> problems = new ArrayList<>();
        Set<String> kafkas = names(rendered.ofKind("Kafka"));
        Map<String, Integer> declared = new LinkedHashMap<>();
        for (JsonNode topic : rendered.ofKind("KafkaTopic")) {
            String name = topic.at("/spec/topicName").isTextual() ? topic.at("/spec/topicName").asText() : name(topic);
            declared.put(name, topic.at("/spec/partitions").isInt() ? topic.at("/spec/partitions").asInt() : null);
            String cluster = topic.at("/metadata/labels/strimzi.io~1cluster").asText();
            if (!kafkas.contains(cluster)) {
                problems.add(describe(topic) + ": label strimzi.io/cluster '" + cluster + "' names no rendered Kafka " + kafkas);
            }
        }
        for (String topic : serviceTopics) {
            if (!declared.containsKey(topic)) {
                problems.add("no KafkaTopic for " + topic + ", a topic of the services (Topics)");
            } else if (!Integer.valueOf(topicsFile.getOrDefault(topic, -1)).equals(declared.get(topic))) {
                problems.add("KafkaTopic " + topic + " has " + declared.get(topic) + " partitions, topics.txt "
                        + topicsFile.get(topic));
            }
        }
        for (String topic : declared.keySet()) {
            if (!serviceTopics.contains(topic)) {
                problems.add("KafkaTopic " + topic + " is no topic of the services (Topics.EVENT_TOPICS, DLQ_TOPICS, REPLAY_TOPICS)");
            }
        }
        if (!new TreeSet<>(topicsFile.keySet()).equals(new TreeSet<>(serviceTopics))) {
            problems.add("deploy/stack/topics.txt lists " + new TreeSet<>(topicsFile.keySet()) + ", the services use "
                    + new TreeSet<>(serviceTopics));
        }
        return problems;
    }

    /** One KRaft Kafka with node pools and an internal TLS listener, that creates no topic by itself. */
    static List<String> kafka(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        List<JsonNode> kafkas = rendered.ofKind("Kafka");
        if (kafkas.size() != 1) {
            return List.of("expected one Kafka, found " + names(kafkas));
        }
        JsonNode kafka = kafkas.get(0);
        for (String annotation : List.of("strimzi.io/kraft", "strimzi.io/node-pools")) {
            if (!"enabled".equals(kafka.path("metadata").path("annotations").path(annotation).asText())) {
                problems.add(describe(kafka) + ": annotation " + annotation + " is not 'enabled'");
            }
        }
        Set<String> roles = new TreeSet<>();
        for (JsonNode pool : rendered.ofKind("KafkaNodePool")) {
            if (name(kafka).equals(pool.at("/metadata/labels/strimzi.io~1cluster").asText())) {
                list(pool.at("/spec/roles")).forEach(role -> roles.add(role.asText()));
            }
        }
        if (!roles.containsAll(List.of("controller", "broker"))) {
            problems.add(describe(kafka) + ": its KafkaNodePools have the roles " + roles + ", KRaft needs controller and broker");
        }
        Optional<JsonNode> listener = servicesListener(kafka);
        if (listener.isEmpty()) {
            problems.add(describe(kafka) + ": no internal listener, which the services connect to");
        } else if (!listener.get().path("tls").asBoolean(false)) {
            problems.add(describe(kafka) + " listener " + listener.get().path("name").asText() + ": no TLS, so events "
                    + "(payment tokens, addresses) and logins cross the network in the clear");
        }
        if (kafka.at("/spec/kafka/config/auto.create.topics.enable").asBoolean(true)) {
            problems.add(describe(kafka) + ": auto.create.topics.enable is not false (topics are declared, with their partitions)");
        }
        return problems;
    }

    /**
     * No event topic keeps a record longer than every service's inbox keeps its id. Kafka deletes a segment only once
     * its newest record is past the retention, so a record lives up to the retention plus the segment roll; delivered
     * again after its id was pruned (a consumer group's offsets expired, a dead letter replayed), it would be applied
     * again.
     */
    static List<String> recordLifetimes(Rendered rendered, Map<String, ServiceConfig> configs, Collection<String> eventTopics) {
        List<String> problems = new ArrayList<>();
        List<JsonNode> kafkas = rendered.ofKind("Kafka");
        if (kafkas.size() != 1) {
            return List.of("expected one Kafka, found " + names(kafkas));
        }
        JsonNode broker = kafkas.get(0).at("/spec/kafka/config");
        Duration retention = kafkaDuration(broker, "log.retention", KAFKA_DEFAULT_RETENTION);
        Duration roll = kafkaDuration(broker, "log.roll", KAFKA_DEFAULT_ROLL);
        Map<String, Duration> lifetimes = new TreeMap<>();
        for (JsonNode topic : rendered.ofKind("KafkaTopic")) {
            String name = topic.at("/spec/topicName").isTextual() ? topic.at("/spec/topicName").asText() : name(topic);
            if (eventTopics.contains(name)) {
                JsonNode config = topic.at("/spec/config");
                Duration topicRetention = wholeNumber(config.path("retention.ms")).map(Duration::ofMillis).orElse(retention);
                Duration topicRoll = wholeNumber(config.path("segment.ms")).map(Duration::ofMillis).orElse(roll);
                lifetimes.put(name, topicRetention.plus(topicRoll));
            }
        }
        forEachService(rendered, configs, (deployment, config) -> {
            Duration inbox = setting(rendered, deployment, config, "eventing.inbox.retention")
                    .flatMap(ManifestChecks::durationOf)
                    .orElse(DEFAULT_INBOX_RETENTION);
            lifetimes.forEach((topic, lifetime) -> {
                if (lifetime.compareTo(inbox) >= 0) {
                    problems.add(describe(deployment) + ": its inbox keeps an id " + inbox.toHours() + " h, a record of "
                            + topic + " may live " + lifetime.toHours() + " h (retention + segment roll)");
                }
            });
        });
        return problems;
    }

    /** A broker's log.retention or log.roll: .ms, else .minutes (retention only), else .hours, else Kafka's default. */
    private static Duration kafkaDuration(JsonNode config, String prefix, Duration fallback) {
        return wholeNumber(config.path(prefix + ".ms")).map(Duration::ofMillis)
                .or(() -> wholeNumber(config.path(prefix + ".minutes")).map(Duration::ofMinutes))
                .or(() -> wholeNumber(config.path(prefix + ".hours")).map(Duration::ofHours))
                .orElse(fallback);
    }

    /** A whole number, written as one or quoted (YAML's "1209600000" is text to Jackson). */
    private static Optional<Long> wholeNumber(JsonNode value) {
        if (value.canConvertToLong()) {
            return Optional.of(value.asLong());
        }
        try {
            return value.isTextual() ? Optional.of(Long.parseLong(value.asText().trim())) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * One CloudNativePG cluster with logical decoding, a bound on the WAL a forgotten slot keeps, and, where it has
     * standbys, synchronous replication: streamed asynchronously, the standby a failover promotes may lack commits the
     * primary had confirmed.
     */
    static List<String> postgres(Rendered rendered) {
        List<JsonNode> clusters = rendered.ofKind("Cluster");
        if (clusters.size() != 1) {
            return List.of("expected one CloudNativePG Cluster, found " + names(clusters));
        }
        List<String> problems = new ArrayList<>();
        JsonNode cluster = clusters.get(0);
        JsonNode parameters = cluster.at("/spec/postgresql/parameters");
        if (!"logical".equals(parameters.path("wal_level").asText())) {
            problems.add(describe(cluster) + ": wal_level is not logical");
        }
        for (String parameter : List.of("max_replication_slots", "max_wal_senders")) {
            if (parameters.path(parameter).asInt(0) < SERVICES.size()) {
                problems.add(describe(cluster) + ": " + parameter + " must leave one for each of the " + SERVICES.size()
                        + " services' relays, is " + parameters.path(parameter));
            }
        }
        if (!parameters.path("max_slot_wal_keep_size").isTextual()) {
            problems.add(describe(cluster) + ": no max_slot_wal_keep_size, so a slot nobody reads may fill the disk");
        }
        // unset, CloudNativePG's own default (5 s) applies
        JsonNode walSenderTimeout = parameters.path("wal_sender_timeout");
        String timeout = walSenderTimeout.isMissingNode() ? "unset (CloudNativePG's 5 s)" : walSenderTimeout.asText();
        if (walSenderTimeout.isMissingNode() || seconds(walSenderTimeout.asText()) <= 10) {
            problems.add(describe(cluster) + ": wal_sender_timeout " + timeout + " drops a relay's replication "
                    + "connection whenever its engine waits for Kafka that long (Debezium answers the walsender every "
                    + "10 s)");
        } else if (seconds(walSenderTimeout.asText()) > 20) {
            problems.add(describe(cluster) + ": wal_sender_timeout " + walSenderTimeout.asText() + " lets a vanished "
                    + "relay hold its slot longer than its lock (about 20 s), and the standby then waits for the slot");
        }
        int instances = cluster.at("/spec/instances").asInt(1);
        if (instances > 1) {
            JsonNode synchronous = cluster.at("/spec/postgresql/synchronous");
            // the synchronous stanza, or the older minSyncReplicas, which CloudNativePG still reads
            if (synchronous.path("number").asInt(0) < 1 && cluster.at("/spec/minSyncReplicas").asInt(0) < 1) {
                problems.add(describe(cluster) + ": " + instances + " instances without synchronous replication, so a "
                        + "failover may lose commits the primary confirmed");
            } else if ("preferred".equals(synchronous.path("dataDurability").asText())) {
                problems.add(describe(cluster) + ": synchronous dataDurability preferred lets the primary confirm "
                        + "commits no standby has while the standbys are away");
            }
        }
        // a password and the service's data would cross the network in the clear for a client that does not ask for TLS
        for (JsonNode rule : list(cluster.at("/spec/postgresql/pg_hba"))) {
            String[] fields = rule.asText().trim().split("\\s+");
            if (fields.length >= 5 && List.of("host", "hostnossl").contains(fields[0])
                    && SERVICES.stream().anyMatch(service -> (service + "_svc").equals(fields[2]))
                    && !"reject".equals(fields[4])) {
                problems.add(describe(cluster) + ": pg_hba rule '" + rule.asText() + "' lets " + fields[2]
                        + " in without TLS (hostssl)");
            }
        }
        int connections = connectionsOfTheServices(rendered);
        int allowed = parameters.path("max_connections").asInt(POSTGRES_DEFAULT_MAX_CONNECTIONS) - SUPERUSER_RESERVED;
        if (allowed < connections) {
            problems.add(describe(cluster) + ": max_connections leaves " + allowed + " connections to the services, which "
                    + "may open " + connections);
        }
        return problems;
    }

    /** What the services' pods may open at once: each replica, and one more per service in a rolling update. */
    static int connectionsOfTheServices(Rendered rendered) {
        int connections = 0;
        for (JsonNode deployment : rendered.ofKind("Deployment")) {
            if (!isSagaService(deployment)) {
                continue;
            }
            JsonNode poolMax = env(deployment).get("DB_POOL_MAX");
            // a value from a ConfigMap counts as well as a literal (README.md, "Changing things", adds settings so)
            int pool = poolMax == null ? DEFAULT_POOL_MAX : resolve(rendered, poolMax).map(Integer::parseInt)
                    .orElseThrow(() -> new IllegalStateException(describe(deployment)
                            + ": DB_POOL_MAX is set to nothing the rendering holds"));
            connections += (deployment.at("/spec/replicas").asInt(1) + 1) * (pool + RELAY_LOCK_SESSIONS)
                    + 2 * STREAMING_RELAY_SESSIONS;
        }
        return connections;
    }

    // --------------------------------------------------------------------------------------------- Kafka users

    /** The SASL mechanism of the listener and of every service's client: Strimzi's scram-sha-512. */
    static final String SASL_MECHANISM = "SCRAM-SHA-512";
    private static final String INCOMING = "mp.messaging.incoming.";

    /** One ACL of a KafkaUser, as Kafka grants it: "Read topic order.events", "Read group order-service". */
    record Acl(String operation, String resourceType, String resource) {
        @Override
        public String toString() {
            return operation + " " + resourceType + " " + resource;
        }
    }

    /**
     * What a service needs of Kafka, from its configuration: to read what its channels consume (its replay topic
     * among them) and its dead letters (the operators' list and replay read them), to write its own topics only (its
     * events, its dead letters, its replays), and its channels' consumer groups. No more: a service that may write
     * another service's topic may publish that service's facts.
     */
    static Set<Acl> aclsNeeded(ServiceConfig config) {
        String service = config.service();
        Set<Acl> acls = new TreeSet<>(Comparator.comparing(Acl::toString));
        config.properties().forEach((name, value) -> {
            if (name.startsWith(INCOMING) && (name.endsWith(".topic") || name.endsWith(".topics"))) {
                for (String topic : value.split(",")) {
                    if (!topic.isBlank()) {
                        acls.add(new Acl("Read", "topic", topic.strip()));
                    }
                }
            } else if (name.startsWith(INCOMING) && name.endsWith(".group.id")) {
                acls.add(new Acl("Read", "group", value.strip()));
            }
        });
        for (String own : List.of(service + ".events", service + ".dlq", service + ".replay")) {
            acls.add(new Acl("Write", "topic", own));
        }
        acls.add(new Acl("Read", "topic", service + ".dlq"));
        return acls;
    }

    /** The ACLs a rendered KafkaUser grants; a pattern other than literal is granted as written ("prefix:name"). */
    static Set<Acl> aclsGranted(JsonNode user) {
        Set<Acl> acls = new TreeSet<>(Comparator.comparing(Acl::toString));
        for (JsonNode rule : list(user.at("/spec/authorization/acls"))) {
            JsonNode resource = rule.path("resource");
            String pattern = resource.path("patternType").asText("literal");
            String name = "literal".equals(pattern) ? resource.path("name").asText("*") : pattern + ":" + resource.path("name").asText();
            for (JsonNode operation : list(rule.path("operations"))) {
                acls.add(new Acl(operation.asText(), resource.path("type").asText(), name));
            }
        }
        return acls;
    }

    /**
     * Kafka takes only named clients and grants each what its ACLs say: a SCRAM listener, simple authorization, the
     * User Operator; a KafkaUser per service granting exactly {@link #aclsNeeded}, and the service logging in as it.
     */
    static List<String> kafkaUsers(Rendered rendered, Map<String, ServiceConfig> configs) {
        List<String> problems = new ArrayList<>();
        rendered.ofKind("Kafka").stream().findFirst().ifPresent(kafka -> {
            servicesListener(kafka).stream()
                    .filter(l -> !"scram-sha-512".equals(l.at("/authentication/type").asText()))
                    .forEach(l -> problems.add(describe(kafka) + " listener " + l.path("name").asText()
                            + ": no scram-sha-512 authentication, so any client may connect as anyone"));
            if (!"simple".equals(kafka.at("/spec/kafka/authorization/type").asText())) {
                problems.add(describe(kafka) + ": no simple authorization, so the KafkaUsers' ACLs are not enforced");
            }
            if (!kafka.at("/spec/entityOperator/userOperator").isObject()) {
                problems.add(describe(kafka) + ": no User Operator, so no KafkaUser gets its credentials");
            }
        });
        Optional<JsonNode> kafka = rendered.ofKind("Kafka").stream().findFirst();
        boolean tls = kafka.flatMap(ManifestChecks::servicesListener).map(l -> l.path("tls").asBoolean(false)).orElse(false);
        String protocol = tls ? "SASL_SSL" : "SASL_PLAINTEXT";
        String clusterCaSecret = kafka.map(k -> name(k) + "-cluster-ca-cert").orElse("");
        Map<String, String> writers = new TreeMap<>();
        SERVICES.forEach(service -> writers.put(service + ".events", service + "-service"));
        for (String service : SERVICES) {
            String name = service + "-service";
            Optional<JsonNode> found = rendered.find("KafkaUser", name);
            if (found.isEmpty()) {
                problems.add("no KafkaUser " + name);
                continue;
            }
            JsonNode user = found.get();
            if (!"scram-sha-512".equals(user.at("/spec/authentication/type").asText())
                    || !"simple".equals(user.at("/spec/authorization/type").asText())) {
                problems.add(describe(user) + ": needs scram-sha-512 authentication and simple authorization");
            }
            Set<Acl> needed = aclsNeeded(configs.get(service));
            Set<Acl> granted = aclsGranted(user);
            for (Acl acl : needed) {
                if (!granted.contains(acl)) {
                    problems.add(describe(user) + ": needs " + acl);
                }
            }
            for (Acl acl : granted) {
                if (needed.contains(acl)) {
                    continue;
                }
                String owner = writers.get(acl.resource());
                problems.add(describe(user) + ": may " + acl + (owner != null && !owner.equals(name) && !"Read".equals(acl.operation())
                        ? ", and publish " + owner + "'s facts" : ", which it does not need"));
            }
            rendered.find("Deployment", name).ifPresent(deployment -> {
                Map<String, JsonNode> env = env(deployment);
                JsonNode jaas = env.getOrDefault("KAFKA_SASL_JAAS_CONFIG", MissingNode.getInstance());
                JsonNode secret = jaas.at("/valueFrom/secretKeyRef");
                if (!name.equals(secret.path("name").asText()) || !"sasl.jaas.config".equals(secret.path("key").asText())) {
                    problems.add(describe(deployment) + ": KAFKA_SASL_JAAS_CONFIG is not key sasl.jaas.config of the "
                            + "Secret " + name + ", which the User Operator makes for its KafkaUser");
                }
                if (!resolve(rendered, env.get("KAFKA_SECURITY_PROTOCOL")).equals(Optional.of(protocol))
                        || !resolve(rendered, env.get("KAFKA_SASL_MECHANISM")).equals(Optional.of(SASL_MECHANISM))) {
                    problems.add(describe(deployment) + ": KAFKA_SECURITY_PROTOCOL and KAFKA_SASL_MECHANISM must be "
                            + protocol + " and " + SASL_MECHANISM);
                }
                if (tls) {
                    JsonNode ca = env.getOrDefault("KAFKA_SSL_TRUSTSTORE_CERTIFICATES", MissingNode.getInstance())
                            .at("/valueFrom/secretKeyRef");
                    if (!resolve(rendered, env.get("KAFKA_SSL_TRUSTSTORE_TYPE")).equals(Optional.of("PEM"))
                            || !clusterCaSecret.equals(ca.path("name").asText()) || !"ca.crt".equals(ca.path("key").asText())) {
                        problems.add(describe(deployment) + ": does not trust the Kafka's cluster CA (KAFKA_SSL_TRUSTSTORE_TYPE "
                                + "PEM, KAFKA_SSL_TRUSTSTORE_CERTIFICATES from key ca.crt of the Secret " + clusterCaSecret + ")");
                    }
                }
            });
        }
        return problems;
    }

    /** The Secret Strimzi makes with its cluster CA's certificate for a Kafka: "<name>-cluster-ca-cert". */
    static boolean madeForTheKafka(Rendered rendered, String secret, String key) {
        return rendered.ofKind("Kafka").stream().anyMatch(kafka -> (name(kafka) + "-cluster-ca-cert").equals(secret))
                && (key == null || List.of("ca.crt", "ca.p12", "ca.password").contains(key));
    }

    /** The Secret Strimzi's User Operator makes for a SCRAM KafkaUser: its name, keys password and sasl.jaas.config. */
    static boolean madeForAKafkaUser(Rendered rendered, String secret, String key) {
        return rendered.find("KafkaUser", secret)
                .filter(user -> "scram-sha-512".equals(user.at("/spec/authentication/type").asText()))
                .isPresent() && (key == null || key.equals("password") || key.equals("sasl.jaas.config"));
    }

    // ------------------------------------------------------------------------------------------------ network

    /**
     * Kafka's listener and the PostgreSQL instances admit the services' pods and no other pod the overlay runs: beside
     * the logins and ACLs, so that a leaked password alone does not let any pod publish a saga event. Selectors are
     * read as their matchLabels; a peer with a namespaceSelector admits pods of other namespaces, which only the
     * database's operator needs.
     */
    static List<String> networkAccess(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        List<JsonNode> workloads = new ArrayList<>(rendered.ofKind("Deployment"));
        workloads.addAll(rendered.ofKind("StatefulSet"));
        rendered.ofKind("Kafka").stream().findFirst().ifPresent(kafka -> {
            Optional<JsonNode> listener = servicesListener(kafka);
            if (listener.isEmpty()) {
                return;
            }
            String where = describe(kafka) + " listener " + listener.get().path("name").asText();
            List<JsonNode> peers = list(listener.get().path("networkPolicyPeers"));
            if (peers.isEmpty()) {
                problems.add(where + ": no networkPolicyPeers, so every pod of the cluster may publish saga events");
                return;
            }
            checkPeers(problems, where, peers, workloads);
        });
        rendered.ofKind("Cluster").stream().findFirst().ifPresent(cluster -> {
            JsonNode instanceLabels = new ObjectMapper().createObjectNode().put("cnpg.io/cluster", name(cluster));
            List<JsonNode> policies = rendered.ofKind("NetworkPolicy").stream()
                    .filter(p -> selects(p.at("/spec/podSelector/matchLabels"), instanceLabels))
                    .filter(p -> p.at("/spec/policyTypes").isMissingNode()
                            || list(p.at("/spec/policyTypes")).stream().anyMatch(t -> "Ingress".equals(t.asText())))
                    .toList();
            String where = describe(cluster);
            if (policies.isEmpty()) {
                problems.add(where + ": no NetworkPolicy selects its instances (cnpg.io/cluster=" + name(cluster)
                        + "), so every pod of the cluster may connect");
                return;
            }
            List<JsonNode> onPostgres = new ArrayList<>();
            boolean operatorReachesStatus = false;
            for (JsonNode policy : policies) {
                for (JsonNode rule : list(policy.at("/spec/ingress"))) {
                    if (list(rule.path("from")).isEmpty()) {
                        problems.add(describe(policy) + ": an ingress rule without 'from' admits every pod and address");
                        continue;
                    }
                    if (admitsPort(rule, POSTGRES_PORT)) {
                        onPostgres.addAll(list(rule.path("from")));
                    }
                    boolean fromOtherNamespace = list(rule.path("from")).stream()
                            .anyMatch(peer -> peer.has("namespaceSelector"));
                    operatorReachesStatus |= fromOtherNamespace && admitsPort(rule, INSTANCE_STATUS_PORT);
                }
            }
            // the instances themselves are not workloads of the overlay; the operator makes their pods
            checkPeers(problems, where + " on " + POSTGRES_PORT, onPostgres, workloads);
            if (!operatorReachesStatus) {
                problems.add(where + ": no rule lets CloudNativePG's operator (another namespace) reach the instances on "
                        + INSTANCE_STATUS_PORT);
            }
        });
        return problems;
    }

    /** Every service's pods are admitted by a peer of the namespace; no other workload's pods are. */
    private static void checkPeers(List<String> problems, String where, List<JsonNode> peers, List<JsonNode> workloads) {
        List<JsonNode> inNamespace = peers.stream()
                .filter(peer -> !peer.has("namespaceSelector") && !peer.has("ipBlock"))
                .toList();
        for (JsonNode workload : workloads) {
            JsonNode labels = workload.at("/spec/template/metadata/labels");
            boolean admitted = inNamespace.stream().anyMatch(peer -> admits(peer.path("podSelector"), labels));
            if (isSagaService(workload) && !admitted) {
                problems.add(where + ": does not admit the pods of " + describe(workload) + " " + labels);
            } else if (!isSagaService(workload) && admitted) {
                problems.add(where + ": admits the pods of " + describe(workload) + ", which is not a saga service");
            }
        }
    }

    /** An empty podSelector admits every pod of the namespace. */
    private static boolean admits(JsonNode podSelector, JsonNode labels) {
        JsonNode matchLabels = podSelector.path("matchLabels");
        boolean everyPod = podSelector.isObject() && podSelector.isEmpty()
                || matchLabels.isObject() && matchLabels.isEmpty() && !podSelector.has("matchExpressions");
        return everyPod || selects(matchLabels, labels);
    }

    /** A rule without ports admits every port. */
    private static boolean admitsPort(JsonNode rule, int port) {
        List<JsonNode> ports = list(rule.path("ports"));
        return ports.isEmpty() || ports.stream().anyMatch(p -> p.path("port").asInt(-1) == port);
    }

    // ----------------------------------------------------------------------------------------------- services

    /** The Secret of the operators' accounts and its one key, a file of configuration (deploy/operator-account.sh). */
    static final String OPERATORS_SECRET = "order-saga-operators";
    static final String OPERATORS_FILE = "operators.properties";

    /**
     * Each service: a Deployment with the environment the service reads, a Service and a PodDisruptionBudget that select
     * its pods, a CloudNativePG Database owned by a managed role with login and replication whose password Secret is the
     * one the service logs in with, and DB_URL and KAFKA_BOOTSTRAP_SERVERS at the Services the operators make.
     */
    static List<String> services(Rendered rendered) {
        List<String> problems = new ArrayList<>();
        Optional<JsonNode> cluster = rendered.ofKind("Cluster").stream().findFirst();
        Optional<JsonNode> kafka = rendered.ofKind("Kafka").stream().findFirst();
        for (String service : SERVICES) {
            String name = service + "-service";
            Optional<JsonNode> found = rendered.find("Deployment", name);
            if (found.isEmpty()) {
                problems.add("no Deployment " + name);
                continue;
            }
            JsonNode deployment = found.get();
            JsonNode podLabels = deployment.at("/spec/template/metadata/labels");
            if (!"order-saga".equals(podLabels.path(PART_OF).asText())) {
                problems.add(describe(deployment) + ": its pods lack the label " + PART_OF + "=order-saga");
            }
            JsonNode container = deployment.at("/spec/template/spec/containers/0");
            checkServiceAndBudget(problems, rendered, name, podLabels, container);

            Map<String, JsonNode> env = new LinkedHashMap<>();
            list(container.path("env")).forEach(e -> env.put(e.path("name").asText(), e));
            for (String variable : requiredEnvironment(service)) {
                if (!env.containsKey(variable)) {
                    problems.add(describe(deployment) + ": no env " + variable + ", which the service reads");
                }
            }
            boolean listensOnServicePort = list(container.path("ports")).stream()
                    .anyMatch(port -> port.path("containerPort").asInt() == SERVICE_PORT);
            if (!resolve(rendered, env.get("HTTP_PORT")).equals(Optional.of(String.valueOf(SERVICE_PORT)))
                    || !listensOnServicePort) {
                problems.add(describe(deployment) + ": HTTP_PORT and the container port must both be " + SERVICE_PORT);
            }
            kafka.ifPresent(k -> {
                String expected = name(k) + "-kafka-bootstrap:" + servicesListener(k).map(l -> l.path("port").asInt()).orElse(-1);
                String actual = resolve(rendered, env.get("KAFKA_BOOTSTRAP_SERVERS")).orElse("(unresolved)");
                if (!expected.equals(actual)) {
                    problems.add(describe(deployment) + ": KAFKA_BOOTSTRAP_SERVERS is " + actual + ", Strimzi's Service is " + expected);
                }
            });
            cluster.ifPresentOrElse(c -> checkDatabase(problems, rendered, deployment, env, c),
                    () -> problems.add(name + ": no CloudNativePG Cluster for its database"));
            checkOperatorAccounts(problems, rendered, deployment, env);
        }
        return problems;
    }

    static List<String> requiredEnvironment(String service) {
        // QUARKUS_CONFIG_LOCATIONS: the operators' accounts; a packaged service has none of its own and does not start
        // without one
        List<String> variables = new ArrayList<>(List.of("DB_URL", "DB_USER", "DB_PASSWORD", "KAFKA_BOOTSTRAP_SERVERS",
                "HTTP_PORT", "MANAGEMENT_PORT", "LOG_JSON", "QUARKUS_CONFIG_LOCATIONS"));
        switch (service) {
            case "payment" -> variables.addAll(List.of("PAYMENT_PROVIDER_URL", "PAYMENT_PROVIDER_WEBHOOK_SECRET"));
            case "shipping" -> variables.add("CARRIER_URL");
            default -> {
            }
        }
        return variables;
    }

    private static void checkServiceAndBudget(List<String> problems, Rendered rendered, String name, JsonNode podLabels,
                                              JsonNode container) {
        Optional<JsonNode> service = rendered.find("Service", name);
        if (service.isEmpty()) {
            problems.add("no Service " + name);
        } else {
            JsonNode selector = service.get().at("/spec/selector");
            if (!selects(selector, podLabels)) {
                problems.add(describe(service.get()) + ": selector " + selector + " does not select the pods " + podLabels);
            }
            boolean reachesPort = list(service.get().at("/spec/ports")).stream()
                    .anyMatch(port -> containerPort(container, port.path("targetPort")).isPresent());
            if (!reachesPort) {
                problems.add(describe(service.get()) + ": no port targets a port of the container");
            }
            // whoever reaches the Service (the ingress, any pod) would read the readiness, the relay's role, the metrics
            if (list(service.get().at("/spec/ports")).stream()
                    .anyMatch(port -> containerPort(container, port.path("targetPort")).equals(Optional.of(MANAGEMENT_PORT)))) {
                problems.add(describe(service.get()) + ": exposes the management port " + MANAGEMENT_PORT + " (/q/)");
            }
        }
        Optional<JsonNode> budget = rendered.find("PodDisruptionBudget", name);
        if (budget.isEmpty()) {
            problems.add("no PodDisruptionBudget " + name);
        } else if (!selects(budget.get().at("/spec/selector/matchLabels"), podLabels)) {
            problems.add(describe(budget.get()) + ": does not select the pods " + podLabels);
        }
    }

    private static void checkDatabase(List<String> problems, Rendered rendered, JsonNode deployment,
                                      Map<String, JsonNode> env, JsonNode cluster) {
        String where = describe(deployment);
        String url = resolve(rendered, env.get("DB_URL")).orElse("");
        Matcher jdbc = JDBC_URL.matcher(url);
        if (!jdbc.matches()) {
            problems.add(where + ": DB_URL '" + url + "' is not a jdbc:postgresql URL");
            return;
        }
        if (!(name(cluster) + "-rw").equals(jdbc.group(1))) {
            problems.add(where + ": DB_URL names host " + jdbc.group(1) + ", the primary's Service is " + name(cluster) + "-rw");
        }
        checkDatabaseTls(problems, deployment, cluster, urlParameters(jdbc.group(4)));
        String databaseName = jdbc.group(3);
        Optional<JsonNode> database = rendered.ofKind("Database").stream()
                .filter(d -> databaseName.equals(d.at("/spec/name").asText())
                        && name(cluster).equals(d.at("/spec/cluster/name").asText()))
                .findFirst();
        if (database.isEmpty()) {
            problems.add(where + ": no CloudNativePG Database " + databaseName + " in Cluster " + name(cluster));
            return;
        }
        String owner = database.get().at("/spec/owner").asText();
        Optional<JsonNode> role = list(cluster.at("/spec/managed/roles")).stream()
                .filter(r -> owner.equals(r.path("name").asText()))
                .findFirst();
        if (role.isEmpty()) {
            problems.add(describe(database.get()) + ": its owner " + owner + " is no managed role of " + describe(cluster));
            return;
        }
        JsonNode managed = role.get();
        if (!managed.path("login").asBoolean(false) || !managed.path("replication").asBoolean(false)) {
            problems.add(describe(cluster) + " role " + owner + ": needs login and replication (the relay's slot), has "
                    + managed);
        }
        if ("absent".equals(managed.path("ensure").asText())) {
            problems.add(describe(cluster) + " role " + owner + ": ensure is absent");
        }
        String passwordSecret = managed.at("/passwordSecret/name").asText();
        for (String variable : List.of("DB_USER", "DB_PASSWORD")) {
            String secret = Optional.ofNullable(env.get(variable))
                    .map(e -> e.at("/valueFrom/secretKeyRef/name").asText())
                    .orElse("");
            if (!passwordSecret.equals(secret)) {
                problems.add(where + ": " + variable + " comes from Secret '" + secret + "', role " + owner
                        + " has its password in Secret '" + passwordSecret + "'");
            }
        }
        rendered.value("Secret", passwordSecret, "username").ifPresent(username -> {
            if (!owner.equals(username)) {
                problems.add("Secret " + passwordSecret + ": username is " + username + ", the role is " + owner);
            }
        });
    }

    /**
     * The service verifies the database's certificate, its name included (sslmode=verify-full: with less, whoever
     * answers at the primary's Service name gets the role's login and the service's data), against the server CA that
     * CloudNativePG made for the cluster: its Secret's ca.crt, mounted where sslrootcert points, and nothing else of
     * that Secret. Its ca.key signs the server's certificates; a pod that holds it could pass for the database.
     */
    private static void checkDatabaseTls(List<String> problems, JsonNode deployment, JsonNode cluster,
                                         Map<String, String> parameters) {
        String where = describe(deployment);
        String caSecret = name(cluster) + "-ca";
        if (!"verify-full".equals(parameters.get("sslmode"))) {
            problems.add(where + ": DB_URL has sslmode " + parameters.getOrDefault("sslmode", "unset (prefer)")
                    + ", so the service does not verify the database's certificate and name (verify-full)");
        }
        String rootCert = parameters.getOrDefault("sslrootcert", "");
        boolean trusted = false;
        for (SecretMount mount : secretMounts(deployment)) {
            if (!caSecret.equals(mount.secret())) {
                continue;
            }
            if (mount.items().isEmpty() || mount.items().stream().anyMatch(item -> !"ca.crt".equals(item.path("key").asText()))) {
                problems.add(where + ": mounts more of the Secret " + caSecret + " than its ca.crt (its ca.key signs "
                        + "the database's certificates)");
            }
            trusted |= mount.putsKeyAt("ca.crt", rootCert);
        }
        if (!trusted) {
            problems.add(where + ": DB_URL's sslrootcert '" + rootCert + "' is not key ca.crt of the Secret " + caSecret
                    + " (CloudNativePG's server CA of " + describe(cluster) + ") mounted in the container");
        }
    }

    /**
     * The operators' accounts: QUARKUS_CONFIG_LOCATIONS names the file of the Secret order-saga-operators (kustomize's
     * generated name in dev) as the container mounts it, and names nothing else, so that every service reads the same
     * accounts and no other configuration comes in that way.
     */
    private static void checkOperatorAccounts(List<String> problems, Rendered rendered, JsonNode deployment,
                                              Map<String, JsonNode> env) {
        String locations = resolve(rendered, env.get("QUARKUS_CONFIG_LOCATIONS")).orElse("");
        boolean mounted = secretMounts(deployment).stream()
                .filter(mount -> mount.secret().equals(OPERATORS_SECRET)
                        || mount.secret().matches(Pattern.quote(OPERATORS_SECRET) + "-[a-z0-9]{10}"))
                .anyMatch(mount -> mount.putsKeyAt(OPERATORS_FILE, locations));
        if (!mounted) {
            problems.add(describe(deployment) + ": QUARKUS_CONFIG_LOCATIONS '" + locations + "' is not key "
                    + OPERATORS_FILE + " of the Secret " + OPERATORS_SECRET + " mounted in the container, where the"
                    + " operators' accounts are");
        }
    }

    /** A Secret's volume as the service's container mounts it: which Secret, which of its keys, and where. */
    private record SecretMount(String secret, List<JsonNode> items, String directory, boolean subPath) {

        /** Whether the Secret's key is the file at that path in the container. */
        boolean putsKeyAt(String key, String file) {
            return !subPath && items.stream().anyMatch(item -> key.equals(item.path("key").asText())
                    && file.equals(directory + "/" + item.path("path").asText()));
        }
    }

    private static List<SecretMount> secretMounts(JsonNode deployment) {
        JsonNode container = deployment.at("/spec/template/spec/containers/0");
        Map<String, JsonNode> volumes = new LinkedHashMap<>();
        list(deployment.at("/spec/template/spec/volumes")).forEach(v -> volumes.put(v.path("name").asText(), v));
        List<SecretMount> mounts = new ArrayList<>();
        for (JsonNode mount : list(container.path("volumeMounts"))) {
            JsonNode secret = volumes.getOrDefault(mount.path("name").asText(), MissingNode.getInstance()).path("secret");
            if (secret.isObject()) {
                mounts.add(new SecretMount(secret.path("secretName").asText(), list(secret.path("items")),
                        mount.path("mountPath").asText().replaceAll("/+$", ""), !mount.path("subPath").isMissingNode()));
            }
        }
        return mounts;
    }

    /** A JDBC URL's parameters ("?a=b&c"), decoded; empty without any. */
    static Map<String, String> urlParameters(String query) {
        Map<String, String> parameters = new LinkedHashMap<>();
        if (query == null || query.length() < 2) {
            return parameters;
        }
        for (String parameter : query.substring(1).split("&")) {
            int is = parameter.indexOf('=');
            parameters.put(URLDecoder.decode(is < 0 ? parameter : parameter.substring(0, is), StandardCharsets.UTF_8),
                    is < 0 ? "" : URLDecoder.decode(parameter.substring(is + 1), StandardCharsets.UTF_8));
        }
        return parameters;
    }

    /** The Secret CloudNativePG makes with its server CA for a Cluster: "<name>-ca", keys ca.crt and ca.key. */
    static boolean madeForTheDatabase(Rendered rendered, String secret, String key) {
        return rendered.ofKind("Cluster").stream().anyMatch(cluster -> (name(cluster) + "-ca").equals(secret))
                && (key == null || List.of("ca.crt", "ca.key").contains(key));
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /** The value of an env var: literal, or from a rendered ConfigMap or Secret; empty if it comes from elsewhere. */
    static Optional<String> resolve(Rendered rendered, JsonNode env) {
        if (env == null) {
            return Optional.empty();
        }
        if (env.has("value")) {
            return Optional.of(env.path("value").asText());
        }
        JsonNode configMap = env.at("/valueFrom/configMapKeyRef");
        if (configMap.isObject()) {
            return rendered.value("ConfigMap", configMap.path("name").asText(), configMap.path("key").asText());
        }
        JsonNode secret = env.at("/valueFrom/secretKeyRef");
        if (secret.isObject()) {
            return rendered.value("Secret", secret.path("name").asText(), secret.path("key").asText());
        }
        return Optional.empty();
    }

    /**
     * A run-time setting of a service's pods: the Deployment's environment variable for it (MicroProfile's mapping:
     * upper case, every other character an underscore) over the service's configuration, whose ${VAR:default} are
     * resolved from the Deployment's environment as well.
     */
    static Optional<String> setting(Rendered rendered, JsonNode deployment, ServiceConfig config, String property) {
        Map<String, JsonNode> env = env(deployment);
        Optional<String> fromEnv = resolve(rendered, env.get(envName(property)));
        if (fromEnv.isPresent()) {
            return fromEnv;
        }
        return config.get(property)
                .map(value -> EXPRESSION.matcher(value).replaceAll(expression -> Matcher.quoteReplacement(
                        resolve(rendered, env.get(expression.group(1)))
                                .orElse(expression.group(2) == null ? "" : expression.group(2)))))
                .filter(value -> !value.isBlank());
    }

    private static Duration runtimeDuration(Rendered rendered, JsonNode deployment, ServiceConfig config,
                                            String property) {
        return setting(rendered, deployment, config, property).flatMap(ManifestChecks::durationOf).orElse(Duration.ZERO);
    }

    static String envName(String property) {
        return property.replaceAll("[^A-Za-z0-9]", "_").toUpperCase(Locale.ROOT);
    }

    /** A duration as Quarkus reads one: a number of seconds, 500ms, 10s, 5m, 2h, 1d, or ISO-8601 (PT10S). */
    static Optional<Duration> durationOf(String value) {
        String text = value.trim();
        try {
            if (text.matches("-?\\d+")) {
                return Optional.of(Duration.ofSeconds(Long.parseLong(text)));
            }
            if (text.matches("(?i)\\d+ms")) {
                return Optional.of(Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2))));
            }
            if (text.matches("(?i)\\d+(\\.\\d+)?[hms]")) {
                return Optional.of(Duration.parse("PT" + text));
            }
            if (text.matches("(?i)\\d+d")) {
                return Optional.of(Duration.parse("P" + text));
            }
            return Optional.of(Duration.parse(text));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    private static String seconds(Duration duration) {
        return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + " s" : duration.toMillis() + " ms";
    }

    /** The env of a workload's first container, by name. */
    static Map<String, JsonNode> env(JsonNode workload) {
        Map<String, JsonNode> env = new LinkedHashMap<>();
        list(workload.at("/spec/template/spec/containers/0/env")).forEach(e -> env.put(e.path("name").asText(), e));
        return env;
    }

    static boolean isSagaService(JsonNode deployment) {
        return SERVICES.stream().anyMatch(s -> (s + "-service").equals(name(deployment)));
    }

    /** The container port a probe or Service port (number or name) refers to. */
    private static Optional<Integer> containerPort(JsonNode container, JsonNode port) {
        for (JsonNode declared : list(container.path("ports"))) {
            int number = declared.path("containerPort").asInt(-1);
            if (port.isInt() && port.asInt() == number
                    || port.isTextual() && port.asText().equals(declared.path("name").asText())) {
                return Optional.of(number);
            }
        }
        return Optional.empty();
    }

    /** The listener the services connect to: the Kafka's internal one. */
    private static Optional<JsonNode> servicesListener(JsonNode kafka) {
        return list(kafka.at("/spec/kafka/listeners")).stream()
                .filter(l -> "internal".equals(l.path("type").asText()))
                .findFirst();
    }

    private static boolean selects(JsonNode selector, JsonNode labels) {
        if (!selector.isObject() || selector.isEmpty()) {
            return false;
        }
        List<String> mismatched = new ArrayList<>();
        selector.fields().forEachRemaining(e -> {
            if (!e.getValue().asText().equals(labels.path(e.getKey()).asText(null))) {
                mismatched.add(e.getKey());
            }
        });
        return mismatched.isEmpty();
    }

    private static Set<String> names(List<JsonNode> objects) {
        Set<String> names = new LinkedHashSet<>();
        objects.forEach(o -> names.add(name(o)));
        return names;
    }

    private static String where(JsonNode workload, JsonNode container) {
        return describe(workload) + " container " + container.path("name").asText();
    }

    // ----------------------------------------------------------------------------------------- the files read

    /** deploy/stack/topics.txt: "<topic> <partitions>" per line, # comments. */
    static Map<String, Integer> readTopicsFile(Path file) {
        Map<String, Integer> topics = new LinkedHashMap<>();
        for (List<String> fields : lines(file)) {
            topics.put(fields.get(0), Integer.parseInt(fields.get(1)));
        }
        return topics;
    }

    /** The non-blank lines of a file without their # comments, split on whitespace. */
    static List<List<String>> lines(Path file) {
        try {
            List<List<String>> lines = new ArrayList<>();
            for (String line : Files.readAllLines(file)) {
                int comment = line.indexOf('#');
                String text = (comment >= 0 ? line.substring(0, comment) : line).trim();
                if (!text.isEmpty()) {
                    lines.add(List.of(text.split("\\s+")));
                }
            }
            return lines;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A service's configuration as its packaged build reads it, before the Deployment's environment: common-events'
     * shared defaults, the service's application.properties over them; in each file the %prod. entries over the plain
     * ones, and the other profiles' left out.
     */
    record ServiceConfig(String service, Map<String, String> properties) {

        static final String SHARED = "common-events/src/main/resources/META-INF/microprofile-config.properties";

        static ServiceConfig read(Path repo, String service) {
            Map<String, String> properties = new LinkedHashMap<>(load(repo.resolve(SHARED)));
            properties.putAll(load(repo.resolve(service + "-service/src/main/resources/application.properties")));
            return new ServiceConfig(service, Map.copyOf(properties));
        }

        /** The configuration of every service of SERVICES, by service. */
        static Map<String, ServiceConfig> readAll(Path repo) {
            Map<String, ServiceConfig> configs = new LinkedHashMap<>();
            SERVICES.forEach(service -> configs.put(service, read(repo, service)));
            return configs;
        }

        Optional<String> get(String property) {
            return Optional.ofNullable(properties.get(property));
        }

        ServiceConfig with(String property, String value) {
            Map<String, String> changed = new LinkedHashMap<>(properties);
            changed.put(property, value);
            return new ServiceConfig(service, Map.copyOf(changed));
        }

        private static Map<String, String> load(Path file) {
            Properties raw = new Properties();
            try (var in = Files.newBufferedReader(file)) {
                raw.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Map<String, String> plain = new LinkedHashMap<>();
            Map<String, String> prod = new LinkedHashMap<>();
            for (String key : raw.stringPropertyNames()) {
                if (key.startsWith("%prod.")) {
                    prod.put(key.substring("%prod.".length()), raw.getProperty(key));
                } else if (!key.startsWith("%")) {
                    plain.put(key, raw.getProperty(key));
                }
            }
            plain.putAll(prod);
            return plain;
        }
    }

    /**
     * The Secrets an overlay refers to without creating them, which the operator of the cluster creates:
     * overlays/prod/external-secrets.txt, "<name> <key> [<key> ...]" per line. Empty for an overlay that generates its own.
     */
    record ExternalSecrets(Map<String, Set<String>> keys) {

        static final String FILE = "external-secrets.txt";
        static final ExternalSecrets NONE = new ExternalSecrets(Map.of());

        static ExternalSecrets read(Path file) {
            Map<String, Set<String>> keys = new LinkedHashMap<>();
            for (List<String> fields : lines(file)) {
                keys.put(fields.get(0), new LinkedHashSet<>(fields.subList(1, fields.size())));
            }
            return new ExternalSecrets(keys);
        }

        boolean provides(String name, String key) {
            return keys.containsKey(name) && (key == null || keys.get(name).contains(key));
        }

        boolean isEmpty() {
            return keys.isEmpty();
        }
    }
}
