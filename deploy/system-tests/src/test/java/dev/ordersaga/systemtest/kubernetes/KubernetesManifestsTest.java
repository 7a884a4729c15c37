package dev.ordersaga.systemtest.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ordersaga.events.Topics;
import dev.ordersaga.systemtest.RepoRoot;
import dev.ordersaga.systemtest.kubernetes.ManifestChecks.ExternalSecrets;
import dev.ordersaga.systemtest.kubernetes.ManifestChecks.ServiceConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static dev.ordersaga.systemtest.kubernetes.ManifestChecks.SERVICES;
import static dev.ordersaga.systemtest.kubernetes.Rendered.list;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes manifests (deploy/kubernetes) as {@code kubectl apply -k} would see them: every overlay is rendered
 * with {@code kubectl kustomize} and checked, so that a manifest cannot rot unnoticed while the services change. The
 * last tests break a copy of the manifests and show that each kind of check reports what it must.
 */
class KubernetesManifestsTest {

    private static final Path REPO = RepoRoot.path();
    private static final Path MANIFESTS = REPO.resolve("deploy/kubernetes");
    private static final Path TOPICS_FILE = REPO.resolve("deploy/stack/topics.txt");
    private static final Map<String, Rendered> RENDERED = new ConcurrentHashMap<>();
    private static final Map<String, ServiceConfig> CONFIGS = ServiceConfig.readAll(REPO);

    static Stream<String> overlays() throws IOException {
        try (Stream<Path> dirs = Files.list(MANIFESTS.resolve("overlays"))) {
            return dirs.filter(Files::isDirectory).map(dir -> dir.getFileName().toString()).sorted().toList().stream();
        }
    }

    @Test
    void thereIsADevAndAProdOverlay() throws IOException {
        assertThat(overlays()).contains("dev", "prod");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void overlayRendersIntoOneNamespace(String overlay) {
        Rendered rendered = rendered(overlay);

        assertThat(rendered.ofKind("Deployment")).extracting(Rendered::name)
                .contains(SERVICES.stream().map(s -> s + "-service").toArray(String[]::new));
        Set<String> namespaces = rendered.objects().stream()
                .filter(o -> !"Namespace".equals(o.path("kind").asText()))
                .map(o -> o.at("/metadata/namespace").asText("(none)"))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(namespaces).as("namespaces of the %s overlay's objects", overlay).hasSize(1);
        assertThat(rendered.find("Namespace", namespaces.iterator().next()))
                .as("the %s overlay creates its namespace", overlay).isPresent();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyContainerHasReadinessAndLivenessProbes(String overlay) {
        assertThat(ManifestChecks.probes(rendered(overlay))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyServiceKeepsServingUntilItsEndpointIsGone(String overlay) {
        assertThat(ManifestChecks.shutdownDelays(rendered(overlay), CONFIGS)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void theGracePeriodOutlastsTheSlowestGracefulStop(String overlay) {
        assertThat(ManifestChecks.gracePeriods(rendered(overlay), CONFIGS)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void readinessWaitsLongerThanTheDatabaseCheckWaitsForAConnection(String overlay) {
        assertThat(ManifestChecks.readinessTimeouts(rendered(overlay), CONFIGS)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyContainerHasResourceRequestsAndLimits(String overlay) {
        assertThat(ManifestChecks.resources(rendered(overlay))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyContainerRunsAsNonRootOnAReadOnlyRootFilesystem(String overlay) {
        assertThat(ManifestChecks.securityContexts(rendered(overlay))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyReferencedConfigMapAndSecretKeyExists(String overlay) {
        Rendered rendered = rendered(overlay);

        assertThat(ManifestChecks.references(rendered)).as("references found").isNotEmpty();
        assertThat(ManifestChecks.referencesResolve(rendered, externalSecrets(MANIFESTS, overlay))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyImageIsPinnedToATagOtherThanLatest(String overlay) {
        assertThat(ManifestChecks.images(rendered(overlay))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void kafkaTopicsAreTheTopicsTheServicesUse(String overlay) {
        assertThat(ManifestChecks.topics(rendered(overlay), serviceTopics(), ManifestChecks.readTopicsFile(TOPICS_FILE)))
                .isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void noEventOutlivesTheInboxesThatWouldKnowIt(String overlay) {
        List<String> events = new ArrayList<>(Topics.EVENT_TOPICS);
        // a replayed event is an event again, which an inbox must still know
        events.addAll(Topics.REPLAY_TOPICS);
        assertThat(ManifestChecks.recordLifetimes(rendered(overlay), CONFIGS, events)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void kafkaAndPostgresComeFromTheirOperatorsReadyForTheRelays(String overlay) {
        Rendered rendered = rendered(overlay);

        assertThat(ManifestChecks.kafka(rendered)).isEmpty();
        assertThat(ManifestChecks.postgres(rendered)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void eachServiceLogsInToKafkaAndMayWriteItsOwnTopicsOnly(String overlay) {
        assertThat(ManifestChecks.kafkaUsers(rendered(overlay), CONFIGS)).isEmpty();
    }

    @Test
    void theAclsAServiceNeedsFollowFromItsConfiguration() {
        assertThat(ManifestChecks.aclsNeeded(CONFIGS.get("payment")).stream().map(Object::toString)).containsExactly(
                "Read group payment-service",
                "Read topic inventory.events",
                "Read topic order.events",
                "Read topic payment.dlq",
                "Read topic payment.replay",
                "Write topic payment.dlq",
                "Write topic payment.events",
                "Write topic payment.replay");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void onlyTheServicesReachKafkaAndPostgres(String overlay) {
        assertThat(ManifestChecks.networkAccess(rendered(overlay))).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("overlays")
    void everyServiceHasAServiceABudgetADatabaseAndARoleWithReplication(String overlay) {
        assertThat(ManifestChecks.services(rendered(overlay))).isEmpty();
    }

    @Test
    void devRunsOneReplicaOfEachServiceTheSandboxesAndThrowawayCredentials() {
        Rendered dev = rendered("dev");

        for (String service : SERVICES) {
            assertThat(dev.find("Deployment", service + "-service").orElseThrow().at("/spec/replicas").asInt())
                    .as("replicas of %s-service", service).isEqualTo(1);
        }
        JsonNode payment = dev.find("Deployment", "payment-service").orElseThrow();
        JsonNode shipping = dev.find("Deployment", "shipping-service").orElseThrow();
        assertThat(ManifestChecks.resolve(dev, ManifestChecks.env(payment).get("PAYMENT_PROVIDER_URL")))
                .hasValue("http://payment-provider-sandbox:" + servicePort(dev, "payment-provider-sandbox"));
        assertThat(ManifestChecks.resolve(dev, ManifestChecks.env(shipping).get("CARRIER_URL")))
                .hasValue("http://carrier-sandbox:" + servicePort(dev, "carrier-sandbox"));

        List<String> providerArgs = args(dev, "payment-provider-sandbox");
        assertThat(providerArgs).startsWith("payment").containsSequence("--host", "0.0.0.0");
        assertThat(providerArgs.get(providerArgs.indexOf("--webhook-url") + 1))
                .isEqualTo("http://payment-service:" + servicePort(dev, "payment-service") + "/webhooks/payment-provider");
        assertThat(args(dev, "carrier-sandbox")).startsWith("carrier").containsSequence("--host", "0.0.0.0");

        // every credential the dev overlay needs is generated by it, none is expected from the cluster
        assertThat(ManifestChecks.referencesResolve(dev, ExternalSecrets.NONE)).isEmpty();
        assertThat(dev.ofKind("Secret")).isNotEmpty();

        // the one account the README gives for dev, "operator" with the password "operator", kept as its digest
        String operators = dev.ofKind("Secret").stream().map(Rendered::name)
                .filter(name -> name.startsWith(ManifestChecks.OPERATORS_SECRET + "-")).findFirst()
                .flatMap(name -> dev.value("Secret", name, ManifestChecks.OPERATORS_FILE)).orElseThrow();
        assertThat(operators.lines().filter(line -> !line.startsWith("#"))).containsExactly(
                "quarkus.security.users.embedded.users.operator=" + sha512Hex("operator:Quarkus:operator"),
                "quarkus.security.users.embedded.roles.operator=operator");
    }

    private static String sha512Hex(String text) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-512")
                    .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void prodRunsTwoReplicasAndTakesCredentialsFromTheCluster() {
        Rendered prod = rendered("prod");
        ExternalSecrets external = externalSecrets(MANIFESTS, "prod");

        for (String service : SERVICES) {
            String name = service + "-service";
            assertThat(prod.find("Deployment", name).orElseThrow().at("/spec/replicas").asInt())
                    .as("replicas of %s", name).isEqualTo(2);
            assertThat(prod.find("PodDisruptionBudget", name).orElseThrow().at("/spec/minAvailable").asInt())
                    .as("minAvailable of %s", name).isEqualTo(1);
            assertThat(ManifestChecks.resolve(prod, ManifestChecks.env(prod.find("Deployment", name).orElseThrow())
                    .get("LOG_JSON"))).as("LOG_JSON of %s", name).hasValue("true");
        }
        assertThat(external.isEmpty()).as("prod lists the Secrets the operator creates").isFalse();
        assertThat(ManifestChecks.externalSecretsAreExactlyTheReferencedOnes(prod, external)).isEmpty();
        assertThat(prod.find("Deployment", "payment-provider-sandbox")).as("no sandbox in prod").isEmpty();
        assertThat(prod.find("Deployment", "carrier-sandbox")).as("no sandbox in prod").isEmpty();
    }

    @Test
    void prodPutsTheReplicasOfAServiceOnDifferentNodes() {
        assertThat(ManifestChecks.nodeSpread(rendered("prod"))).isEmpty();
    }

    @Test
    void prodPutsKafkasNodesAndPostgresInstancesOnDifferentNodes() {
        assertThat(ManifestChecks.statefulSpread(rendered("prod"))).isEmpty();
    }

    @Test
    void prodPullsEveryImageFromARegistry() {
        assertThat(ManifestChecks.registries(rendered("prod"))).isEmpty();
    }

    // ------------------------------------------------------------- the checks fail when the manifests are broken

    @Test
    void aMissingReadinessProbeIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/order-service.yaml"), yaml -> removeBlock(yaml, "readinessProbe"));

        assertThat(ManifestChecks.probes(render(manifests, "dev")))
                .containsExactly("Deployment order-service container order-service: no readinessProbe");
    }

    @Test
    void aProbeOnAnotherPathIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/shipping-service.yaml"), yaml -> replaceOnce(yaml, "path: /q/health/live", "path: /"));

        assertThat(ManifestChecks.probes(render(manifests, "prod")))
                .singleElement().asString()
                .startsWith("Deployment shipping-service container shipping-service: livenessProbe is not GET /q/health/live");
    }

    @Test
    void aProbeOnTheApisPortOrAServiceExposingTheManagementPortIsReported(@TempDir Path temp) {
        Path probeOnApi = copyOfManifests(temp.resolve("probe"));
        edit(probeOnApi.resolve("base/order-service.yaml"), yaml -> replaceOnce(yaml,
                "              port: management\n", "              port: http\n"));
        assertThat(ManifestChecks.probes(render(probeOnApi, "dev"))).containsExactly("Deployment order-service container "
                + "order-service: readinessProbe on port http, but health is served on the management port 9000");

        Path exposed = copyOfManifests(temp.resolve("exposed"));
        edit(exposed.resolve("base/inventory-service.yaml"), yaml -> replaceOnce(yaml,
                "      targetPort: http\n", "      targetPort: management\n"));
        assertThat(ManifestChecks.services(render(exposed, "dev")))
                .containsExactly("Service inventory-service: exposes the management port 9000 (/q/)");
    }

    @Test
    void aMissingTooShortOrNotBuiltInShutdownDelayIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/order-service.yaml"), yaml -> replaceOnce(yaml,
                "            - name: QUARKUS_SHUTDOWN_DELAY\n              value: \"10s\"\n", ""));
        edit(manifests.resolve("base/shipping-service.yaml"),
                yaml -> replaceOnce(yaml, "value: \"10s\"", "value: \"2s\""));
        Map<String, ServiceConfig> configs = new LinkedHashMap<>(CONFIGS);
        configs.put("inventory", CONFIGS.get("inventory").with("quarkus.shutdown.delay-enabled", "false"));

        assertThat(ManifestChecks.shutdownDelays(render(manifests, "prod"), configs)).containsExactly(
                "Deployment order-service: no shutdown delay (QUARKUS_SHUTDOWN_DELAY): HTTP closes while kube-proxy and "
                        + "the ingress may still route to the pod",
                "Deployment inventory-service: the service is built without quarkus.shutdown.delay-enabled=true, so no "
                        + "shutdown delay is ever applied",
                "Deployment shipping-service: shutdown delay 2 s is under 5 s, too short for kube-proxy and the ingress "
                        + "to stop routing to the pod");
    }

    @Test
    void aGracePeriodShorterThanTheSlowestGracefulStopIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/payment-service.yaml"), yaml -> replaceOnce(yaml,
                "terminationGracePeriodSeconds: 75", "terminationGracePeriodSeconds: 60"));
        // a longer drain lengthens the stop it is part of
        edit(manifests.resolve("base/order-service.yaml"),
                yaml -> replaceOnce(yaml, "value: \"10s\"", "value: \"30s\""));

        assertThat(ManifestChecks.gracePeriods(render(manifests, "prod"), CONFIGS)).containsExactly(
                "Deployment order-service: terminationGracePeriodSeconds 60 is shorter than its slowest graceful stop, "
                        + "67 s (shutdown delay 30 s, relay 30 s, Kafka consumer 2 s, dead letters' producer 5 s)",
                "Deployment payment-service: terminationGracePeriodSeconds 60 is shorter than its slowest graceful stop, "
                        + "67 s (shutdown delay 10 s, relay 30 s, provider calls 10 s, surpluses' calls 10 s, "
                        + "Kafka consumer 2 s, dead letters' producer 5 s)");
    }

    @Test
    void aReadinessTimeoutWithinTheAcquisitionTimeoutIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/shipping-service.yaml"),
                yaml -> replaceOnce(yaml, "timeoutSeconds: 8", "timeoutSeconds: 3"));
        Map<String, ServiceConfig> configs = new LinkedHashMap<>(CONFIGS);
        configs.put("order", CONFIGS.get("order")
                .with("quarkus.datasource.jdbc.acquisition-timeout", "${DB_ACQUISITION_TIMEOUT:10s}"));

        assertThat(ManifestChecks.readinessTimeouts(render(manifests, "dev"), configs)).containsExactly(
                "Deployment order-service container order-service: readinessProbe timeoutSeconds 8 is not above the "
                        + "datasource's acquisition timeout, 10 s, so a saturated pool takes the pod out of its Service",
                "Deployment shipping-service container shipping-service: readinessProbe timeoutSeconds 3 is not above the "
                        + "datasource's acquisition timeout, 5 s, so a saturated pool takes the pod out of its Service");
    }

    @Test
    void missingLimitsAreReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("overlays/dev/sandboxes.yaml"), yaml -> removeBlock(yaml, "limits"));

        assertThat(ManifestChecks.resources(render(manifests, "dev"))).containsExactly(
                "Deployment payment-provider-sandbox container payment-provider-sandbox: no resources.limits.cpu",
                "Deployment payment-provider-sandbox container payment-provider-sandbox: no resources.limits.memory");
    }

    @Test
    void aWritableRootFilesystemOrARootUserIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/payment-service.yaml"), yaml -> replaceOnce(
                replaceAll(yaml, "runAsNonRoot: true", "runAsNonRoot: false"),
                "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false"));

        assertThat(ManifestChecks.securityContexts(render(manifests, "dev"))).containsExactly(
                "Deployment payment-service container payment-service: runAsNonRoot is not true",
                "Deployment payment-service container payment-service: readOnlyRootFilesystem is not true");
    }

    @Test
    void aReferenceToAMissingConfigMapKeyIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kustomization.yaml"), yaml -> replaceOnce(yaml,
                "- DB_URL=jdbc:postgresql://order-saga-db-rw:5432/payment_db",
                "- DATABASE_URL=jdbc:postgresql://order-saga-db-rw:5432/payment_db"));

        assertThat(ManifestChecks.referencesResolve(render(manifests, "dev"), ExternalSecrets.NONE))
                .singleElement().asString()
                .startsWith("Deployment payment-service container payment-service env DB_URL: ConfigMap payment-service-config-")
                .endsWith(" key DB_URL is rendered without that key");
    }

    @Test
    void aSecretThatProdNeitherRendersNorListsIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        Path list = manifests.resolve("overlays/prod/" + ExternalSecrets.FILE);
        edit(list, text -> replaceOnce(text, "order-saga-operators          operators.properties",
                "stale-credentials             operators.properties"));
        Rendered prod = render(manifests, "prod");
        ExternalSecrets external = ExternalSecrets.read(list);

        // every service reads the operators' accounts from it
        assertThat(ManifestChecks.referencesResolve(prod, external)).containsExactlyInAnyOrderElementsOf(
                java.util.stream.Stream.of("order", "inventory", "payment", "shipping").map(service -> "Deployment "
                        + service + "-service volume operators: Secret order-saga-operators key operators.properties"
                        + " is not in the rendered prod overlay nor in " + ExternalSecrets.FILE).toList());
        assertThat(ManifestChecks.externalSecretsAreExactlyTheReferencedOnes(prod, external)).containsExactly(
                ExternalSecrets.FILE + " lists Secret stale-credentials, which nothing in the overlay refers to");
    }

    @Test
    void aLatestOrMissingImageTagIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kustomization.yaml"), yaml -> replaceOnce(
                replaceOnce(yaml, "  - name: order-saga/order-service\n    newTag: 0.1.0\n",
                        "  - name: order-saga/order-service\n    newTag: latest\n"),
                "  - name: order-saga/inventory-service\n    newTag: 0.1.0\n", ""));

        assertThat(ManifestChecks.images(render(manifests, "prod"))).contains(
                "Deployment order-service container order-service: image "
                        + "registry.example/order-saga/order-service:latest is tagged latest",
                "Deployment inventory-service container inventory-service: image "
                        + "registry.example/order-saga/inventory-service has no tag");
    }

    @Test
    void aProdImageWithoutARegistryIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("overlays/prod/kustomization.yaml"), yaml -> replaceOnce(yaml,
                "  - name: order-saga/payment-service\n    newName: registry.example/order-saga/payment-service\n", ""));

        assertThat(ManifestChecks.registries(render(manifests, "prod"))).containsExactly(
                "Deployment payment-service container payment-service: image order-saga/payment-service:0.1.0 names no "
                        + "registry, so it is pulled from Docker Hub");
        assertThat(ManifestChecks.registry("registry.example/order-saga/order-service:0.1.0")).hasValue("registry.example");
        assertThat(ManifestChecks.registry("localhost:5000/order-saga/order-service")).hasValue("localhost:5000");
        assertThat(ManifestChecks.registry("order-saga/order-service:0.1.0")).as("a Docker Hub path").isEmpty();
        assertThat(ManifestChecks.registry("postgres:15")).isEmpty();
    }

    @Test
    void aSoftOrMissingSpreadOverNodesInProdIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        // shipping keeps the base's soft spread; payment has none at all
        edit(manifests.resolve("overlays/prod/kustomization.yaml"), yaml -> replaceOnce(replaceOnce(yaml,
                hardSpreadOf("shipping-service"), ""), hardSpreadOf("payment-service"), ""));
        edit(manifests.resolve("base/payment-service.yaml"), yaml -> removeBlock(yaml, "topologySpreadConstraints"));

        assertThat(ManifestChecks.nodeSpread(render(manifests, "prod"))).containsExactly(
                "Deployment payment-service: no topologySpreadConstraint across kubernetes.io/hostname selects its pods, "
                        + "so its replicas may share a node",
                "Deployment shipping-service: its spread across kubernetes.io/hostname is whenUnsatisfiable "
                        + "ScheduleAnyway, not DoNotSchedule, so the scheduler may put its replicas on one node",
                "Deployment shipping-service: its spread across kubernetes.io/hostname counts the old and the new "
                        + "pods of a rolling update together (no matchLabelKeys pod-template-hash), so both new "
                        + "replicas may land on one node",
                "Deployment shipping-service: its spread across kubernetes.io/hostname counts cordoned nodes "
                        + "(nodeTaintsPolicy is not Honor), so on two nodes the replica a drain evicts can be placed nowhere");
    }

    @Test
    void aSpreadThatCountsTheOldPodsOfARollingUpdateIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("overlays/prod/hard-spread.yaml"), yaml -> replaceOnce(yaml, "- op: add\n"
                + "  path: /spec/template/spec/topologySpreadConstraints/0/matchLabelKeys\n"
                + "  value: [pod-template-hash]\n", ""));

        assertThat(ManifestChecks.nodeSpread(render(manifests, "prod"))).hasSize(SERVICES.size())
                .allSatisfy(problem -> assertThat(problem).endsWith("(no matchLabelKeys pod-template-hash), so both "
                        + "new replicas may land on one node"));
    }

    @Test
    void kafkaNodesOrPostgresInstancesThatMayShareAMachineAreReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("overlays/prod/kafka.yaml"),
                yaml -> replaceOnce(yaml, "strimzi.io/pool-name: dual-role", "strimzi.io/pool-name: another-pool"));
        edit(manifests.resolve("overlays/prod/postgres.yaml"),
                yaml -> replaceOnce(yaml, "podAntiAffinityType: required", "podAntiAffinityType: preferred"));

        assertThat(ManifestChecks.statefulSpread(render(manifests, "prod"))).containsExactly(
                "KafkaNodePool dual-role: no required pod anti-affinity across kubernetes.io/hostname selects its pods, "
                        + "so its nodes may share a machine",
                "Cluster order-saga-db: its instances are kept apart across kubernetes.io/hostname only by preference "
                        + "(affinity.podAntiAffinityType is not required), so they may share a machine");
    }

    @Test
    void aServiceThatMayWriteAnothersTopicOrLacksAReadIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kafka-users.yaml"), yaml -> replaceOnce(replaceOnce(yaml,
                "          name: inventory.events\n          patternType: literal\n        operations: [Write]\n",
                "          name: payment.events\n          patternType: literal\n        operations: [Write]\n"),
                "          name: order.events\n          patternType: literal\n        operations: [Read]\n", ""));

        // the first Read of order.events in the file is order-service's neighbour's: inventory-service's
        assertThat(ManifestChecks.kafkaUsers(render(manifests, "prod"), CONFIGS)).containsExactlyInAnyOrder(
                "KafkaUser inventory-service: needs Read topic order.events",
                "KafkaUser inventory-service: needs Write topic inventory.events",
                "KafkaUser inventory-service: may Write topic payment.events, and publish payment-service's facts");
    }

    @Test
    void aKafkaWithoutAuthenticationOrAServiceLoggingInAsAnotherIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kafka.yaml"), yaml -> replaceOnce(removeBlock(yaml, "authentication"),
                "    authorization:\n      type: simple\n", ""));
        edit(manifests.resolve("base/shipping-service.yaml"), yaml -> replaceOnce(yaml,
                "                  name: shipping-service\n                  key: sasl.jaas.config\n",
                "                  name: payment-service\n                  key: sasl.jaas.config\n"));

        assertThat(ManifestChecks.kafkaUsers(render(manifests, "dev"), CONFIGS)).containsExactlyInAnyOrder(
                "Kafka order-saga listener tls: no scram-sha-512 authentication, so any client may connect as anyone",
                "Kafka order-saga: no simple authorization, so the KafkaUsers' ACLs are not enforced",
                "Deployment shipping-service: KAFKA_SASL_JAAS_CONFIG is not key sasl.jaas.config of the Secret "
                        + "shipping-service, which the User Operator makes for its KafkaUser");
    }

    @Test
    void aKafkaListenerWithoutTlsOrAServiceTrustingAnotherCaIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kafka.yaml"), yaml -> replaceOnce(yaml, "        tls: true\n", "        tls: false\n"));
        assertThat(ManifestChecks.kafka(render(manifests, "dev"))).containsExactly("Kafka order-saga listener tls: no TLS, "
                + "so events (payment tokens, addresses) and logins cross the network in the clear");

        Path otherCa = copyOfManifests(temp.resolve("other-ca"));
        edit(otherCa.resolve("base/order-service.yaml"), yaml -> replaceOnce(yaml,
                "                  name: order-saga-cluster-ca-cert\n", "                  name: some-other-ca\n"));
        assertThat(ManifestChecks.kafkaUsers(render(otherCa, "prod"), CONFIGS)).containsExactly("Deployment order-service: "
                + "does not trust the Kafka's cluster CA (KAFKA_SSL_TRUSTSTORE_TYPE PEM, KAFKA_SSL_TRUSTSTORE_CERTIFICATES "
                + "from key ca.crt of the Secret order-saga-cluster-ca-cert)");
    }

    @Test
    void aServiceThatDoesNotVerifyItsDatabaseOrTrustsAnotherCaOrHoldsTheCaKeyIsReported(@TempDir Path temp) {
        Path unverified = copyOfManifests(temp.resolve("unverified"));
        edit(unverified.resolve("base/kustomization.yaml"), yaml -> replaceOnce(yaml,
                "/order_db?sslmode=verify-full&", "/order_db?sslmode=require&"));
        assertThat(ManifestChecks.services(render(unverified, "prod"))).containsExactly("Deployment order-service: DB_URL "
                + "has sslmode require, so the service does not verify the database's certificate and name (verify-full)");

        Path otherCa = copyOfManifests(temp.resolve("other-ca"));
        edit(otherCa.resolve("base/inventory-service.yaml"), yaml -> replaceOnce(yaml,
                "            secretName: order-saga-db-ca\n", "            secretName: some-other-ca\n"));
        assertThat(ManifestChecks.services(render(otherCa, "prod"))).containsExactly("Deployment inventory-service: "
                + "DB_URL's sslrootcert '/etc/order-saga-db-ca/ca.crt' is not key ca.crt of the Secret order-saga-db-ca "
                + "(CloudNativePG's server CA of Cluster order-saga-db) mounted in the container");

        Path withKey = copyOfManifests(temp.resolve("with-key"));
        edit(withKey.resolve("base/payment-service.yaml"), yaml -> replaceOnce(yaml,
                "              - key: ca.crt\n                path: ca.crt\n",
                "              - key: ca.crt\n                path: ca.crt\n              - key: ca.key\n                path: ca.key\n"));
        assertThat(ManifestChecks.services(render(withKey, "prod"))).containsExactly("Deployment payment-service: mounts "
                + "more of the Secret order-saga-db-ca than its ca.crt (its ca.key signs the database's certificates)");
    }

    @Test
    void aServiceReadingItsOperatorsFromElsewhereIsReported(@TempDir Path temp) {
        Path otherFile = copyOfManifests(temp.resolve("other-file"));
        edit(otherFile.resolve("base/shipping-service.yaml"), yaml -> replaceOnce(yaml,
                "              value: /etc/order-saga-operators/operators.properties\n",
                "              value: /etc/order-saga-operators/operators.properties,/tmp/more.properties\n"));
        assertThat(ManifestChecks.services(render(otherFile, "dev"))).containsExactly("Deployment shipping-service: "
                + "QUARKUS_CONFIG_LOCATIONS '/etc/order-saga-operators/operators.properties,/tmp/more.properties' is not"
                + " key operators.properties of the Secret order-saga-operators mounted in the container, where the"
                + " operators' accounts are");

        Path otherSecret = copyOfManifests(temp.resolve("other-secret"));
        edit(otherSecret.resolve("base/order-service.yaml"), yaml -> replaceOnce(yaml,
                "            secretName: order-saga-operators\n", "            secretName: order-operators-of-old\n"));
        assertThat(ManifestChecks.services(render(otherSecret, "prod"))).containsExactly("Deployment order-service: "
                + "QUARKUS_CONFIG_LOCATIONS '/etc/order-saga-operators/operators.properties' is not key"
                + " operators.properties of the Secret order-saga-operators mounted in the container, where the"
                + " operators' accounts are");
    }

    @Test
    void aServiceRoleLetInWithoutTlsIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/postgres.yaml"), yaml -> replaceOnce(yaml,
                "      - hostssl payment_db payment_svc all scram-sha-256\n", "      - host payment_db payment_svc all scram-sha-256\n"));

        assertThat(ManifestChecks.postgres(render(manifests, "dev"))).containsExactly("Cluster order-saga-db: pg_hba rule "
                + "'host payment_db payment_svc all scram-sha-256' lets payment_svc in without TLS (hostssl)");
    }

    @Test
    void aKafkaListenerOpenToEveryPodIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kafka.yaml"), yaml -> removeBlock(yaml, "networkPolicyPeers"));

        assertThat(ManifestChecks.networkAccess(render(manifests, "dev"))).containsExactly(
                "Kafka order-saga listener tls: no networkPolicyPeers, so every pod of the cluster may publish saga events");
    }

    @Test
    void postgresWithoutANetworkPolicyIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kustomization.yaml"), yaml -> replaceOnce(yaml, "  - network-policies.yaml\n", ""));

        assertThat(ManifestChecks.networkAccess(render(manifests, "prod"))).containsExactly(
                "Cluster order-saga-db: no NetworkPolicy selects its instances (cnpg.io/cluster=order-saga-db), so every "
                        + "pod of the cluster may connect");
    }

    @Test
    void aServiceWhosePodsThePoliciesMissIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/payment-service.yaml"), yaml -> replaceAll(yaml,
                "app.kubernetes.io/component: saga-service", "app.kubernetes.io/component: payments"));

        String pods = "the pods of Deployment payment-service {\"app.kubernetes.io/component\":\"payments\","
                + "\"app.kubernetes.io/name\":\"payment-service\",\"app.kubernetes.io/part-of\":\"order-saga\"}";
        assertThat(ManifestChecks.networkAccess(render(manifests, "prod"))).containsExactly(
                "Kafka order-saga listener tls: does not admit " + pods,
                "Cluster order-saga-db on 5432: does not admit " + pods);
    }

    @Test
    void anotherPodAdmittedOrAnOpenRuleOrNoRuleForTheOperatorIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        // the dev sandboxes labelled as services would reach the broker and the database
        edit(manifests.resolve("overlays/dev/sandboxes.yaml"), yaml -> replaceAll(yaml,
                "app.kubernetes.io/component: sandbox", "app.kubernetes.io/component: saga-service"));
        edit(manifests.resolve("base/network-policies.yaml"), yaml -> replaceOnce(yaml, "          port: 8000\n", "          port: 8001\n"));

        assertThat(ManifestChecks.networkAccess(render(manifests, "dev"))).containsExactlyInAnyOrder(
                "Kafka order-saga listener tls: admits the pods of Deployment payment-provider-sandbox, which is not a "
                        + "saga service",
                "Kafka order-saga listener tls: admits the pods of Deployment carrier-sandbox, which is not a saga service",
                "Cluster order-saga-db on 5432: admits the pods of Deployment payment-provider-sandbox, which is not a "
                        + "saga service",
                "Cluster order-saga-db on 5432: admits the pods of Deployment carrier-sandbox, which is not a saga service",
                "Cluster order-saga-db: no rule lets CloudNativePG's operator (another namespace) reach the instances on "
                        + "8000");

        Path open = copyOfManifests(temp.resolve("open"));
        edit(open.resolve("base/network-policies.yaml"), yaml -> replaceOnce(yaml,
                "    - from:\n        - podSelector:\n            matchLabels:\n              cnpg.io/cluster: order-saga-db\n",
                "    - ports:\n        - port: 9187\n"));
        assertThat(ManifestChecks.networkAccess(render(open, "dev"))).containsExactly(
                "NetworkPolicy order-saga-db: an ingress rule without 'from' admits every pod and address");
    }

    @Test
    void aMissingKafkaTopicIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kafka-topics.yaml"), yaml -> removeDocument(yaml, "name: shipping.dlq"));

        assertThat(ManifestChecks.topics(render(manifests, "dev"), serviceTopics(),
                ManifestChecks.readTopicsFile(TOPICS_FILE)))
                .containsExactly("no KafkaTopic for shipping.dlq, a topic of the services (Topics)");
    }

    @Test
    void kafkasDefaultSegmentRollIsReportedAsOutlivingTheInboxes(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kafka.yaml"), yaml -> replaceOnce(yaml, "      log.roll.hours: 12\n", ""));

        assertThat(ManifestChecks.recordLifetimes(render(manifests, "dev"), CONFIGS, Topics.EVENT_TOPICS))
                .hasSize(ManifestChecks.SERVICES.size() * Topics.EVENT_TOPICS.size())
                .contains("Deployment order-service: its inbox keeps an id 192 h, a record of order.events may live "
                        + "336 h (retention + segment roll)");
    }

    @Test
    void aTopicsOwnRetentionIsAddedUpToo(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        // quoted, as YAML lets a number be written: 14 days
        edit(manifests.resolve("base/kafka-topics.yaml"), yaml -> replaceOnce(yaml, "  partitions: 3\n",
                "  partitions: 3\n  config:\n    retention.ms: \"1209600000\"\n"));

        assertThat(ManifestChecks.recordLifetimes(render(manifests, "dev"), CONFIGS, Topics.EVENT_TOPICS))
                .hasSize(ManifestChecks.SERVICES.size())
                .contains("Deployment payment-service: its inbox keeps an id 192 h, a record of order.events may live "
                        + "348 h (retention + segment roll)");
    }

    @Test
    void aRoleWithoutReplicationIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/postgres.yaml"), yaml -> replaceOnce(yaml,
                "      - name: inventory_svc\n        ensure: present\n        login: true\n        replication: true\n",
                "      - name: inventory_svc\n        ensure: present\n        login: true\n        replication: false\n"));

        assertThat(ManifestChecks.services(render(manifests, "prod"))).singleElement().asString()
                .startsWith("Cluster order-saga-db role inventory_svc: needs login and replication");
    }

    @Test
    void postgresWithTooFewConnectionsForTheServicesIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/postgres.yaml"), yaml -> replaceOnce(yaml, "      max_connections: \"300\"\n", ""));

        Rendered prod = render(manifests, "prod");
        assertThat(ManifestChecks.connectionsOfTheServices(prod)).as("4 services, 2 replicas and 1 in a rolling update, "
                + "20 pooled and its relay's lock each, and twice a streaming relay's five other sessions")
                .isEqualTo(4 * (3 * 21 + 2 * 5));
        assertThat(ManifestChecks.postgres(prod)).singleElement().asString()
                .endsWith("max_connections leaves 97 connections to the services, which may open 292");
    }

    @Test
    void aPoolSizeFromTheConfigMapCountsInTheServicesConnections(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/kustomization.yaml"), yaml -> replaceOnce(yaml, "      - LOG_JSON=false\n",
                "      - LOG_JSON=false\n      - DB_POOL_MAX=40\n"));
        edit(manifests.resolve("base/order-service.yaml"), yaml -> replaceOnce(yaml,
                "            - name: KAFKA_BOOTSTRAP_SERVERS\n",
                "            - name: DB_POOL_MAX\n              valueFrom:\n                configMapKeyRef:\n"
                        + "                  name: order-saga-config\n                  key: DB_POOL_MAX\n"
                        + "            - name: KAFKA_BOOTSTRAP_SERVERS\n"));

        assertThat(ManifestChecks.connectionsOfTheServices(render(manifests, "prod")))
                .as("order's 40 pooled from the ConfigMap, the others' 20, and the relays' sessions, for 3 pods")
                .isEqualTo(3 * 41 + 2 * 5 + 3 * (3 * 21 + 2 * 5));
    }

    @Test
    void standbysWithoutSynchronousReplicationAreReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        // the whole stanza: a postgresql: left empty would delete the base's parameters
        edit(manifests.resolve("overlays/prod/postgres.yaml"), yaml -> removeBlock(yaml, "postgresql"));
        assertThat(ManifestChecks.postgres(render(manifests, "prod"))).singleElement().asString()
                .endsWith("3 instances without synchronous replication, so a failover may lose commits the primary "
                        + "confirmed");

        Path preferred = copyOfManifests(temp.resolve("preferred"));
        edit(preferred.resolve("overlays/prod/postgres.yaml"), yaml -> replaceOnce(yaml, "dataDurability: required",
                "dataDurability: preferred"));
        assertThat(ManifestChecks.postgres(render(preferred, "prod"))).singleElement().asString()
                .endsWith("synchronous dataDurability preferred lets the primary confirm commits no standby has while "
                        + "the standbys are away");
    }

    @Test
    void aWalSenderTimeoutLongerThanTheRelaysHandOverIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/postgres.yaml"), yaml -> replaceOnce(yaml, "      wal_sender_timeout: 20s\n",
                "      wal_sender_timeout: 1min\n"));

        assertThat(ManifestChecks.postgres(render(manifests, "prod"))).singleElement().asString()
                .endsWith("wal_sender_timeout 1min lets a vanished relay hold its slot longer than its lock (about 20 s), "
                        + "and the standby then waits for the slot");
        assertThat(ManifestChecks.seconds("20s")).isEqualTo(20);
        assertThat(ManifestChecks.seconds("5000")).as("milliseconds without a unit").isEqualTo(5);
    }

    @Test
    void aWalSenderTimeoutLeftToTheOperatorOrShorterThanDebeziumsAnswersIsReported(@TempDir Path temp) {
        Path manifests = copyOfManifests(temp);
        edit(manifests.resolve("base/postgres.yaml"), yaml -> replaceOnce(yaml, "      wal_sender_timeout: 20s\n", ""));
        assertThat(ManifestChecks.postgres(render(manifests, "prod"))).singleElement().asString()
                .endsWith("wal_sender_timeout unset (CloudNativePG's 5 s) drops a relay's replication connection "
                        + "whenever its engine waits for Kafka that long (Debezium answers the walsender every 10 s)");

        Path tenSeconds = copyOfManifests(temp.resolve("ten"));
        edit(tenSeconds.resolve("base/postgres.yaml"), yaml -> replaceOnce(yaml, "      wal_sender_timeout: 20s\n",
                "      wal_sender_timeout: 10s\n"));
        assertThat(ManifestChecks.postgres(render(tenSeconds, "prod"))).singleElement().asString()
                .contains("wal_sender_timeout 10s drops a relay's replication connection");
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private static Rendered rendered(String overlay) {
        return RENDERED.computeIfAbsent(overlay, o -> render(MANIFESTS, o));
    }

    private static Rendered render(Path manifests, String overlay) {
        return Rendered.parse(overlay, Kustomize.render(manifests.resolve("overlays").resolve(overlay)));
    }

    /** The entry of prod's kustomization that makes a Deployment's spread over nodes strict. */
    private static String hardSpreadOf(String deployment) {
        return "  - target:\n      group: apps\n      version: v1\n      kind: Deployment\n      name: " + deployment
                + "\n    path: hard-spread.yaml\n";
    }

    /** The overlay's list of Secrets the cluster's operator creates, if it has one. */
    private static ExternalSecrets externalSecrets(Path manifests, String overlay) {
        Path file = manifests.resolve("overlays").resolve(overlay).resolve(ExternalSecrets.FILE);
        return Files.exists(file) ? ExternalSecrets.read(file) : ExternalSecrets.NONE;
    }

    private static List<String> serviceTopics() {
        List<String> topics = new ArrayList<>(Topics.EVENT_TOPICS);
        topics.addAll(Topics.DLQ_TOPICS);
        topics.addAll(Topics.REPLAY_TOPICS);
        return topics;
    }

    private static int servicePort(Rendered rendered, String service) {
        return rendered.find("Service", service).orElseThrow().at("/spec/ports/0/port").asInt();
    }

    private static List<String> args(Rendered rendered, String deployment) {
        JsonNode workload = rendered.find("Deployment", deployment)
                .orElseThrow(() -> new AssertionError("no Deployment " + deployment + " in " + rendered.overlay()));
        return list(workload.at("/spec/template/spec/containers/0/args")).stream().map(JsonNode::asText).toList();
    }

    private static Path copyOfManifests(Path temp) {
        Path copy = temp.resolve("kubernetes");
        try (Stream<Path> files = Files.walk(MANIFESTS)) {
            for (Path file : files.toList()) {
                Path target = copy.resolve(MANIFESTS.relativize(file).toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(file, target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return copy;
    }

    private static void edit(Path file, UnaryOperator<String> change) {
        try {
            String before = Files.readString(file);
            String after = change.apply(before);
            assertThat(after).as("the edit of %s changes it", file).isNotEqualTo(before);
            Files.writeString(file, after);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Fails if the text is not there: a break that no longer applies must not pass as a check that holds. */
    private static String replaceOnce(String text, String target, String replacement) {
        assertThat(text).as("the text to replace").contains(target);
        return text.replaceFirst(Pattern.quote(target), Matcher.quoteReplacement(replacement));
    }

    private static String replaceAll(String text, String target, String replacement) {
        assertThat(text).as("the text to replace").contains(target);
        return text.replace(target, replacement);
    }

    /** Removes the first "key:" line and the lines indented below it. */
    private static String removeBlock(String yaml, String key) {
        List<String> lines = new ArrayList<>(List.of(yaml.split("\n", -1)));
        int start = -1;
        for (int i = 0; i < lines.size() && start < 0; i++) {
            if (lines.get(i).trim().equals(key + ":")) {
                start = i;
            }
        }
        assertThat(start).as("a line '%s:'", key).isNotNegative();
        int indent = indentation(lines.get(start));
        int end = start + 1;
        while (end < lines.size() && (lines.get(end).isBlank() || indentation(lines.get(end)) > indent)) {
            end++;
        }
        lines.subList(start, end).clear();
        return String.join("\n", lines);
    }

    private static int indentation(String line) {
        return line.length() - line.stripLeading().length();
    }

    /** Removes the YAML document (between "---" lines) that contains the marker. */
    private static String removeDocument(String yaml, String marker) {
        List<String> documents = new ArrayList<>(List.of(yaml.split("\n---\n", -1)));
        assertThat(documents.removeIf(document -> document.contains(marker))).as("a document with '%s'", marker).isTrue();
        return String.join("\n---\n", documents);
    }
}
