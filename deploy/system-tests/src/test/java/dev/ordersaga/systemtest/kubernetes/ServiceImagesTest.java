package dev.ordersaga.systemtest.kubernetes;

import dev.ordersaga.systemtest.RepoRoot;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.ordersaga.systemtest.kubernetes.ManifestChecks.SERVICES;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark measures the services as their images run them. The images' start script (the base image's
 * run-java.sh) picks a collector and heap sizing of its own unless told; each Dockerfile tells it, and the benchmark's
 * default JVM options name the same collector with the JVM's own sizing.
 */
class ServiceImagesTest {

    private static final Path REPO = RepoRoot.path();
    private static final Pattern GC = Pattern.compile("GC_CONTAINER_OPTIONS=\"([^\"]+)\"");

    @Test
    void everyImageChoosesTheCollectorTheBenchmarkMeasures() throws IOException {
        Matcher benchDefault = Pattern.compile("SAGA_JVM_OPTIONS:-([^}]+)}")
                .matcher(Files.readString(REPO.resolve("deploy/bench.sh")));
        assertThat(benchDefault.find()).as("deploy/bench.sh's default SAGA_JVM_OPTIONS").isTrue();
        for (String service : SERVICES) {
            String dockerfile = Files.readString(REPO.resolve(service + "-service/src/main/docker/Dockerfile.jvm"));
            Matcher collector = GC.matcher(dockerfile);
            assertThat(collector.find()).as(service + " sets GC_CONTAINER_OPTIONS").isTrue();
            assertThat(collector.group(1)).isEqualTo("-XX:+UseSerialGC");
            assertThat(benchDefault.group(1).split("\\s+")).as("the benchmark's services, as " + service + "'s image")
                    .contains(collector.group(1));
            // run-java.sh's 10/20 would shrink the heap to the live data; these are the JVM's defaults, as measured
            assertThat(dockerfile).contains("GC_MIN_HEAP_FREE_RATIO=40").contains("GC_MAX_HEAP_FREE_RATIO=70");
        }
    }
}
