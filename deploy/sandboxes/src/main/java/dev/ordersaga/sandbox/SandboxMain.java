package dev.ordersaga.sandbox;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code java -jar sandboxes.jar payment|carrier [options]}: a sandbox as a process, for running the system by
 * hand. Runs until the process is stopped.
 */
public final class SandboxMain {

    static final String USAGE = """
            usage: java -jar sandboxes.jar payment [--host 127.0.0.1] [--port 9101] [--webhook-url URL --webhook-secret SECRET] [--timeout-delay 3s] [--webhook-delay 500ms]
                   java -jar sandboxes.jar carrier [--host 127.0.0.1] [--port 9102]
            --host: the address to listen on (0.0.0.0: every interface, e.g. in a container)
            --webhook-secret: what the webhooks are signed with (payment-service's payment.provider.webhook-secret);
                              without it, the environment's PAYMENT_PROVIDER_WEBHOOK_SECRET, which other users'
                              ps does not show
            durations: 1500ms, 3s, or a plain number of milliseconds""";
    static final String WEBHOOK_SECRET_VARIABLE = "PAYMENT_PROVIDER_WEBHOOK_SECRET";
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s)?");
    private static final Set<String> PAYMENT_OPTIONS = Set.of("--host", "--port", "--webhook-url", "--webhook-secret",
            "--timeout-delay", "--webhook-delay");
    private static final Set<String> CARRIER_OPTIONS = Set.of("--host", "--port");

    private SandboxMain() {
    }

    public static void main(String[] args) {
        AutoCloseable sandbox;
        try {
            sandbox = start(args, System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        // The HTTP server's own thread keeps the JVM alive; the hook frees the port on Ctrl-C or kill.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                sandbox.close();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }));
    }

    /**
     * Starts the sandbox named by the first argument, what no argument says read from {@code environment};
     * IllegalArgumentException for anything it cannot read.
     */
    static AutoCloseable start(String[] args, Map<String, String> environment) {
        if (args.length == 0) {
            throw new IllegalArgumentException("which sandbox: payment or carrier?");
        }
        String which = args[0];
        return switch (which) {
            case "payment" -> startPayment(options(args, PAYMENT_OPTIONS), environment);
            case "carrier" -> startCarrier(options(args, CARRIER_OPTIONS));
            default -> throw new IllegalArgumentException("unknown sandbox: " + which);
        };
    }

    static Duration duration(String text) {
        Matcher matcher = DURATION.matcher(text.trim());
        if (!matcher.matches()) {
            throw new IllegalArgumentException("not a duration: " + text + " (use e.g. 1500ms or 3s)");
        }
        long amount = Long.parseLong(matcher.group(1));
        return "s".equals(matcher.group(2)) ? Duration.ofSeconds(amount) : Duration.ofMillis(amount);
    }

    private static PaymentSandbox startPayment(Map<String, String> options, Map<String, String> environment) {
        PaymentSandbox.Builder builder = PaymentSandbox.builder().host(host(options)).port(port(options, 9101));
        if (options.containsKey("--webhook-url")) {
            builder.webhookUrl(URI.create(options.get("--webhook-url"))).webhookSecret(
                    options.getOrDefault("--webhook-secret", environment.get(WEBHOOK_SECRET_VARIABLE)));
        }
        if (options.containsKey("--timeout-delay")) {
            builder.timeoutDelay(duration(options.get("--timeout-delay")));
        }
        if (options.containsKey("--webhook-delay")) {
            builder.webhookDelay(duration(options.get("--webhook-delay")));
        }
        return builder.start();
    }

    private static CarrierSandbox startCarrier(Map<String, String> options) {
        return CarrierSandbox.start(host(options), port(options, 9102));
    }

    private static String host(Map<String, String> options) {
        String host = options.getOrDefault("--host", SandboxHttpServer.DEFAULT_HOST);
        try {
            InetAddress.getByName(host);
            return host;
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address to listen on: " + host);
        }
    }

    private static int port(Map<String, String> options, int defaultPort) {
        String port = options.get("--port");
        try {
            return port == null ? defaultPort : Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a port: " + port);
        }
    }

    /** The "--name value" pairs after the sandbox's name. */
    private static Map<String, String> options(String[] args, Set<String> allowed) {
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i += 2) {
            if (!allowed.contains(args[i])) {
                throw new IllegalArgumentException("unknown option for " + args[0] + ": " + args[i]);
            }
            if (i + 1 == args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            options.put(args[i], args[i + 1]);
        }
        return options;
    }
}
