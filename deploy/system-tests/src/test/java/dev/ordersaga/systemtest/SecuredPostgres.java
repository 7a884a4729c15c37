package dev.ordersaga.systemtest;

import dev.ordersaga.testing.TestStack;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A second PostgreSQL server, for the test of the services' TLS to their database: the local stack's PostgreSQL
 * (its binaries), in a cluster of its own that takes connections over TLS only, as the Kubernetes manifests' cluster
 * takes the services' (CloudNativePG serves TLS, and its rules for the services' roles are hostssl). Its certificate
 * is made for the run and is its own CA, which the services trust through their JDBC URL ({@code sslmode=verify-full},
 * {@code sslrootcert}) as the Deployments trust CloudNativePG's. A second certificate for the same names, from a key of
 * its own, stands for a server that is not the one the services were told to trust.
 *
 * <p>The cluster lives in a directory of its own under the system's temporary directory, which PostgreSQL's user can
 * reach (a test run as root runs PostgreSQL as {@code postgres}, since PostgreSQL refuses root), and goes with it.
 */
final class SecuredPostgres implements AutoCloseable {

    private static final String HOST = ScratchServer.HOST;
    /** A loopback address the server listens on too, which its certificate does not name. */
    static final String UNNAMED_HOST = "127.0.0.2";
    private static final int PORT = 15432;
    private static final String SUPERUSER = "postgres";
    private static final List<String> SERVICES = List.of("order", "inventory", "payment", "shipping");

    private final Path home;
    private final Path bin;
    private final boolean asPostgres;
    private final Map<String, String> passwords;
    private final Connection admin;
    private final Thread shutdownHook;

    private SecuredPostgres(Path home, Path bin, boolean asPostgres, Map<String, String> passwords, Connection admin,
            Thread shutdownHook) {
        this.home = home;
        this.bin = bin;
        this.asPostgres = asPostgres;
        this.passwords = passwords;
        this.admin = admin;
        this.shutdownHook = shutdownHook;
    }

    /** Starts the server, with one database and one login role with REPLICATION per service, as the stack has. */
    static SecuredPostgres start() throws Exception {
        if (ScratchServer.answers(PORT)) {
            throw new IllegalStateException(HOST + ":" + PORT + " is taken: a secured PostgreSQL left over from another run?");
        }
        Path bin = binaries();
        boolean asPostgres = "root".equals(System.getProperty("user.name"));
        Path home = Files.createTempDirectory("secured-postgres-");
        // a test JVM ended without close() (Ctrl-C) would leave the server up on its port, and the next run's
        // PostgresTlsIT would find the port taken
        Thread shutdownHook = new Thread(() -> {
            try {
                stop(home, bin, asPostgres, "immediate");
            } catch (Exception e) {
                // the JVM is going: there is no one left to tell
            } finally {
                if (Files.exists(home)) {
                    ScratchServer.delete(home);
                }
            }
        });
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        try {
            certificate(home, "server");
            certificate(home, "impostor");
            String superPassword = UUID.randomUUID().toString();
            Files.writeString(home.resolve("superuser.pw"), superPassword);
            if (asPostgres) {
                run(home, List.of("chown", "-R", SUPERUSER + ":", home.toString()), false);
            }
            run(home, List.of(bin.resolve("initdb").toString(), "-D", home.resolve("data").toString(), "-U", SUPERUSER,
                    "--pwfile=" + home.resolve("superuser.pw"), "--auth=scram-sha-256", "-E", "UTF8", "--no-instructions"),
                    asPostgres);
            Files.writeString(home.resolve("data/postgresql.conf"), String.join("\n",
                    "",
                    "listen_addresses = '" + HOST + "," + UNNAMED_HOST + "'",
                    "port = " + PORT,
                    "unix_socket_directories = '" + home + "'",
                    "ssl = on",
                    "ssl_cert_file = '" + home.resolve("server.crt") + "'",
                    "ssl_key_file = '" + home.resolve("server.key") + "'",
                    "wal_level = logical",
                    "max_wal_senders = 10",
                    "max_replication_slots = 10",
                    // four pools of 20, the relays' sessions, the test's own
                    "max_connections = 200",
                    "shared_buffers = 32MB",
                    // the data is thrown away with the directory
                    "fsync = off",
                    "full_page_writes = off",
                    "synchronous_commit = off",
                    ""), StandardOpenOption.APPEND);
            // TLS or nothing: a client that would talk in the clear is turned away, whatever it asks for
            Files.writeString(home.resolve("data/pg_hba.conf"), String.join("\n",
                    "hostssl all all " + HOST + "/32 scram-sha-256",
                    "hostssl replication all " + HOST + "/32 scram-sha-256",
                    "hostssl all all " + UNNAMED_HOST + "/32 scram-sha-256",
                    "hostssl replication all " + UNNAMED_HOST + "/32 scram-sha-256",
                    "hostnossl all all all reject",
                    "hostnossl replication all all reject",
                    ""));
            run(home, List.of(bin.resolve("pg_ctl").toString(), "-D", home.resolve("data").toString(),
                    "-l", home.resolve("postgres.log").toString(), "-w", "-t", "60", "start"), asPostgres);
        } catch (Exception | Error e) {
            ScratchServer.delete(home);
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
            throw e;
        }
        Map<String, String> passwords = new TreeMap<>();
        SERVICES.forEach(service -> passwords.put(service, UUID.randomUUID().toString()));
        SecuredPostgres postgres = null;
        try {
            Connection admin = DriverManager.getConnection(url(home, HOST, "postgres", "server"), SUPERUSER,
                    Files.readString(home.resolve("superuser.pw")));
            postgres = new SecuredPostgres(home, bin, asPostgres, passwords, admin, shutdownHook);
            postgres.createServiceDatabases();
        } catch (Exception | Error e) {
            if (postgres != null) {
                postgres.close();
            } else {
                stop(home, bin, asPostgres, "fast");
                ScratchServer.delete(home);
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            }
            throw e;
        }
        return postgres;
    }

    /**
     * What a service gets in its environment to use this server, as a Deployment's env and Secrets give it: DB_URL
     * with {@code sslmode=verify-full} and the CA named by {@code trusted} ("server", or "impostor" for a CA that did
     * not sign this server's certificate), DB_USER and DB_PASSWORD.
     */
    Map<String, String> serviceEnvironment(String module, String trusted) {
        return serviceEnvironment(module, HOST, trusted);
    }

    /** The same, the server dialled at {@code host} ({@link #UNNAMED_HOST}: a name its certificate does not carry). */
    Map<String, String> serviceEnvironment(String module, String host, String trusted) {
        String service = module.replace("-service", "");
        return Map.of("DB_URL", url(home, host, service + "_db", trusted),
                "DB_USER", service + "_svc",
                "DB_PASSWORD", passwords.get(service));
    }

    /** Every session of the services' roles: its role, its kind (client backend, walsender) and whether it is TLS. */
    List<String> serviceSessions() throws SQLException {
        List<String> sessions = new ArrayList<>();
        try (Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT a.usename, a.backend_type, s.ssl FROM pg_stat_activity a "
                     + "JOIN pg_stat_ssl s USING (pid) WHERE a.usename LIKE '%\\_svc' ORDER BY 1, 2")) {
            while (rs.next()) {
                sessions.add(rs.getString(1) + " " + rs.getString(2) + " " + (rs.getBoolean(3) ? "tls" : "plain"));
            }
        }
        return sessions;
    }

    /** The replication slot of the service's relay, and whether a walsender reads it. */
    boolean slotRead(String service) throws SQLException {
        try (PreparedStatement st = admin.prepareStatement(
                "SELECT active FROM pg_replication_slots WHERE database = ? AND slot_type = 'logical'")) {
            st.setString(1, service + "_db");
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    @Override
    public void close() throws Exception {
        try {
            admin.close();
        } finally {
            try {
                stop(home, bin, asPostgres, "fast");
            } finally {
                ScratchServer.delete(home);
            }
        }
        // only once both are done: had either failed, the hook tries again as the JVM ends
        Runtime.getRuntime().removeShutdownHook(shutdownHook);
    }

    private void createServiceDatabases() throws SQLException {
        try (Statement st = admin.createStatement()) {
            for (String service : SERVICES) {
                String role = service + "_svc";
                // REPLICATION for the relay's slot; the database its own, as on the stack (deploy/stack/postgres.sh)
                st.execute("CREATE ROLE " + role + " WITH LOGIN REPLICATION PASSWORD '" + passwords.get(service) + "'");
                st.execute("CREATE DATABASE " + service + "_db OWNER " + role);
                st.execute("REVOKE CONNECT, TEMPORARY ON DATABASE " + service + "_db FROM PUBLIC");
            }
        }
    }

    private static String url(Path home, String host, String database, String trusted) {
        return "jdbc:postgresql://" + host + ":" + PORT + "/" + database + "?sslmode=verify-full&sslrootcert="
                + URLEncoder.encode(home.resolve(trusted + ".crt").toString(), StandardCharsets.UTF_8);
    }

    /** The binaries of the stack's own PostgreSQL, as it reports them. */
    private static Path binaries() throws SQLException {
        try (Connection c = TestStack.connect("postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT setting FROM pg_config WHERE name = 'BINDIR'")) {
            if (!rs.next()) {
                throw new IllegalStateException("the stack's PostgreSQL names no BINDIR");
            }
            return Path.of(rs.getString(1));
        }
    }

    /**
     * A self-signed certificate for localhost and 127.0.0.1 (name.crt) and its key (name.key), readable by its owner
     * only, as PostgreSQL requires of its key.
     */
    private static void certificate(Path home, String name) throws IOException, InterruptedException {
        Path key = home.resolve(name + ".key");
        run(home, List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:" + HOST,
                "-keyout", key.toString(), "-out", home.resolve(name + ".crt").toString()), false);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    }

    /** Stops the server with pg_ctl's shutdown mode ("fast", or "immediate" when the JVM is going). */
    private static void stop(Path home, Path bin, boolean asPostgres, String mode)
            throws IOException, InterruptedException {
        if (Files.exists(home.resolve("data/postmaster.pid"))) {
            run(home, List.of(bin.resolve("pg_ctl").toString(), "-D", home.resolve("data").toString(), "-m", mode,
                    "-w", "-t", "60", "stop"), asPostgres);
        }
    }



    /** Runs a tool, as PostgreSQL's user where asked; its output goes to tools.log, which a failure shows. */
    private static void run(Path home, List<String> command, boolean asPostgres) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>();
        if (asPostgres) {
            full.addAll(List.of("runuser", "-u", SUPERUSER, "--"));
        }
        full.addAll(command);
        Path log = home.resolve("tools.log");
        Process tool = new ProcessBuilder(full).directory(home.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!tool.waitFor(90, TimeUnit.SECONDS) || tool.exitValue() != 0) {
            tool.destroyForcibly();
            throw new IllegalStateException("could not run " + command.get(0) + " for the secured PostgreSQL: "
                    + Files.readString(log));
        }
    }
}
