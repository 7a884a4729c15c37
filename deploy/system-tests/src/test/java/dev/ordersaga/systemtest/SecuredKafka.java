package dev.ordersaga.systemtest;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * A second Kafka broker, for the test of the services' ACLs: the same Kafka as the local stack's (its jars, which
 * deploy/stack/kafka.sh fetched), but taking only clients that log in with SCRAM-SHA-512 over TLS and granting each
 * what its ACLs say, as the Kubernetes manifests' Kafka does (Strimzi: a TLS listener with scram-sha-512, simple
 * authorization). Its certificate is made for the run and is its own CA, which clients trust in PEM as the services
 * trust Strimzi's cluster CA. Its data lives under target/ and goes with it.
 */
final class SecuredKafka implements AutoCloseable {

    static final String MECHANISM = "SCRAM-SHA-512";
    private static final String HOST = ScratchServer.HOST;
    private static final int PORT = 19092;
    private static final int CONTROLLER_PORT = 19093;
    /** The broker's own way to itself; clients use PORT. */
    private static final int BROKER_PORT = 19094;
    private static final String ADMIN = "admin";

    private final Path home;
    private final Process process;
    private final String adminPassword;
    private final String caPem;

    private SecuredKafka(Path home, Process process, String adminPassword, String caPem) {
        this.home = home;
        this.process = process;
        this.adminPassword = adminPassword;
        this.caPem = caPem;
    }

    static SecuredKafka start() throws IOException, InterruptedException {
        Path repo = RepoRoot.path();
        Path libs = repo.resolve(".stack/kafka/libs").toAbsolutePath();
        if (!Files.isDirectory(libs)) {
            throw new IllegalStateException(libs + " is missing: start the local stack first (deploy/stack.sh up)");
        }
        for (int port : List.of(PORT, CONTROLLER_PORT, BROKER_PORT)) {
            if (ScratchServer.answers(port)) {
                throw new IllegalStateException(HOST + ":" + port + " is taken: a secured broker left over from another run?");
            }
        }
        Path home = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "secured-kafka-");
        String adminPassword = Uuid.randomUuid().toString();
        String storePassword = Uuid.randomUuid().toString();
        Path keystore = home.resolve("broker.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        run(home, List.of(keytool.toString(), "-genkeypair", "-alias", "broker", "-keyalg", "RSA", "-keysize", "2048",
                "-dname", "CN=localhost", "-ext", "SAN=IP:" + HOST + ",DNS:localhost", "-validity", "2",
                "-keystore", keystore.toString(), "-storetype", "PKCS12", "-storepass", storePassword));
        run(home, List.of(keytool.toString(), "-exportcert", "-rfc", "-alias", "broker", "-keystore", keystore.toString(),
                "-storepass", storePassword, "-file", home.resolve("ca.pem").toString()));
        String caPem = Files.readString(home.resolve("ca.pem"));
        Files.writeString(home.resolve("server.properties"), String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@" + HOST + ":" + CONTROLLER_PORT,
                "listeners=SASL_SSL://" + HOST + ":" + PORT + ",BROKER://" + HOST + ":" + BROKER_PORT
                        + ",CONTROLLER://" + HOST + ":" + CONTROLLER_PORT,
                "advertised.listeners=SASL_SSL://" + HOST + ":" + PORT + ",BROKER://" + HOST + ":" + BROKER_PORT,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,BROKER:SASL_PLAINTEXT",
                "inter.broker.listener.name=BROKER",
                "sasl.enabled.mechanisms=" + MECHANISM,
                "sasl.mechanism.inter.broker.protocol=" + MECHANISM,
                "listener.name.broker.scram-sha-512.sasl.jaas.config=" + jaas(ADMIN, adminPassword),
                "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "ssl.keystore.type=PKCS12",
                "ssl.keystore.location=" + keystore,
                "ssl.keystore.password=" + storePassword,
                "ssl.key.password=" + storePassword,
                "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                // the broker reaches its own controller on the plaintext loopback listener, as ANONYMOUS; clients come in
                // through the SCRAM listener only, under their own names
                "super.users=User:" + ADMIN + ";User:ANONYMOUS",
                "allow.everyone.if.no.acl.found=false",
                "log.dirs=" + home.resolve("data"),
                "auto.create.topics.enable=false",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=3",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                ""));
        Files.writeString(home.resolve("log4j2.properties"), String.join("\n",
                "status = warn",
                "appender.file.type = File",
                "appender.file.name = FILE",
                "appender.file.fileName = " + home.resolve("server.log"),
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = FILE",
                ""));
        List<String> java = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m",
                "-Dlog4j2.configurationFile=" + home.resolve("log4j2.properties"), "-cp", libs + "/*");
        // the administrator's credentials are in the metadata from the start: no client could create them otherwise
        run(home, concat(java, "kafka.tools.StorageTool", "format", "-t", Uuid.randomUuid().toString(),
                "-c", home.resolve("server.properties").toString(),
                "--add-scram", MECHANISM + "=[name=" + ADMIN + ",password=" + adminPassword + "]"));
        Process process = new ProcessBuilder(concat(java, "kafka.Kafka", home.resolve("server.properties").toString()))
                .redirectErrorStream(true).redirectOutput(home.resolve("stdout.log").toFile()).start();
        SecuredKafka kafka = new SecuredKafka(home, process, adminPassword, caPem);
        try {
            await("the secured broker answers its administrator").atMost(Duration.ofSeconds(90))
                    .pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> {
                        if (!process.isAlive()) {
                            throw new AssertionError("the secured broker exited: " + home.resolve("stdout.log"));
                        }
                        try (Admin admin = kafka.admin()) {
                            return !admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty();
                        }
                    });
        } catch (RuntimeException | Error e) {
            kafka.close();
            throw e;
        }
        return kafka;
    }

    String bootstrap() {
        return HOST + ":" + PORT;
    }

    /** What a client of this broker logs in with and trusts, as kafka.* settings of a service name them. */
    Map<String, String> clientSettings(String user, String password) {
        return Map.of(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_SSL",
                SaslConfigs.SASL_MECHANISM, MECHANISM,
                SaslConfigs.SASL_JAAS_CONFIG, jaas(user, password),
                SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM",
                SslConfigs.SSL_TRUSTSTORE_CERTIFICATES_CONFIG, caPem);
    }

    /**
     * The same, as the environment of a service: KAFKA_SECURITY_PROTOCOL, KAFKA_SSL_TRUSTSTORE_CERTIFICATES (the PEM,
     * lines and all) and so on, as the Deployments' env hands them over.
     */
    Map<String, String> clientEnvironment(String user, String password) {
        Map<String, String> environment = new TreeMap<>();
        clientSettings(user, password).forEach((key, value) ->
                environment.put("KAFKA_" + key.toUpperCase(Locale.ROOT).replace('.', '_'), value));
        return environment;
    }

    Admin admin() {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.putAll(clientSettings(ADMIN, adminPassword));
        return Admin.create(p);
    }

    KafkaProducer<String, String> producer(String user, String password) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        p.putAll(clientSettings(user, password));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(p);
    }

    void createTopics(Map<String, Integer> partitions) throws Exception {
        try (Admin admin = admin()) {
            List<NewTopic> topics = new ArrayList<>();
            partitions.forEach((name, count) -> topics.add(new NewTopic(name, count, (short) 1)));
            admin.createTopics(topics).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** A user with a SCRAM-SHA-512 password, allowed what {@code acls} says ("Read topic x", "Read group y") and no more. */
    void createUser(String user, String password, List<String> acls) throws Exception {
        try (Admin admin = admin()) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password))).all().get(30, TimeUnit.SECONDS);
            List<AclBinding> bindings = new ArrayList<>();
            for (String acl : acls) {
                String[] parts = acl.split(" ");
                bindings.add(new AclBinding(
                        new ResourcePattern(ResourceType.fromString(parts[1].toUpperCase(Locale.ROOT)), parts[2], PatternType.LITERAL),
                        new AccessControlEntry("User:" + user, "*", AclOperation.fromString(parts[0].toUpperCase(Locale.ROOT)),
                                AclPermissionType.ALLOW)));
            }
            admin.createAcls(bindings).all().get(30, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        ScratchServer.delete(home);
    }

    private static String jaas(String user, String password) {
        return "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }


    private static void run(Path home, List<String> command) throws IOException, InterruptedException {
        Path log = home.resolve("tools.log");
        Process tool = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!tool.waitFor(60, TimeUnit.SECONDS) || tool.exitValue() != 0) {
            throw new IllegalStateException("could not prepare the secured broker (" + command.get(0) + "): " + Files.readString(log));
        }
    }

    private static List<String> concat(List<String> first, String... rest) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(rest));
        return all;
    }
}
