package dev.ordersaga.systemtest.kubernetes;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Renders a kustomization with {@code kubectl kustomize}: what {@code kubectl apply -k} would send to the cluster.
 * The kubectl on the PATH, or the one the environment variable KUBECTL names. deploy/test.sh installs one where there
 * is none (Debian's kubernetes-client, kubectl 1.20 with kustomize 2.0.3: the manifests keep to what that renders).
 */
final class Kustomize {

    private static final String KUBECTL = System.getenv().getOrDefault("KUBECTL", "kubectl");

    private Kustomize() {
    }

    /** The rendered multi-document YAML; an AssertionError that says why if there is none. */
    static String render(Path kustomization) {
        Path stderr = null;
        try {
            stderr = Files.createTempFile("kustomize-", ".stderr");
            Process process;
            try {
                process = new ProcessBuilder(KUBECTL, "kustomize", kustomization.toString())
                        .redirectError(stderr.toFile())
                        .start();
            } catch (IOException e) {
                throw new AssertionError("cannot run '" + KUBECTL + "' to render " + kustomization + ": " + e.getMessage()
                        + ". The Kubernetes manifests are checked with kubectl kustomize: install kubectl (Debian:"
                        + " apt-get install kubernetes-client; deploy/test.sh does it), or point KUBECTL at one.", e);
            }
            process.getOutputStream().close();
            String rendered = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(KUBECTL + " kustomize " + kustomization + " did not finish within 60 s");
            }
            if (process.exitValue() != 0) {
                throw new AssertionError(KUBECTL + " kustomize " + kustomization + " failed (exit " + process.exitValue()
                        + "):\n" + Files.readString(stderr));
            }
            return rendered;
        } catch (IOException e) {
            throw new AssertionError("rendering " + kustomization + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while rendering " + kustomization, e);
        } finally {
            if (stderr != null) {
                try {
                    Files.deleteIfExists(stderr);
                } catch (IOException ignored) {
                    // a temporary file left behind is no reason to fail a test
                }
            }
        }
    }
}
