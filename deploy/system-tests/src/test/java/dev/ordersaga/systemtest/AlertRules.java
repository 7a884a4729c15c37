package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The Prometheus alerting rules the project ships ({@code deploy/monitoring/alert-rules.yaml}), as tests read them. */
record AlertRules(List<JsonNode> rules) {

    static final Path FILE = RepoRoot.path().resolve("deploy/monitoring/alert-rules.yaml");
    private static final Pattern SERIES = Pattern.compile("\\bsaga_[a-z_]+\\b");

    static AlertRules read() throws IOException {
        JsonNode file = new ObjectMapper(new YAMLFactory()).readTree(FILE.toFile());
        List<JsonNode> rules = new ArrayList<>();
        for (JsonNode group : file.path("groups")) {
            group.path("rules").forEach(rules::add);
        }
        return new AlertRules(rules);
    }

    /** Every series of the services that some rule's expression names. */
    Set<String> series() {
        Set<String> names = new TreeSet<>();
        for (JsonNode rule : rules) {
            Matcher m = SERIES.matcher(rule.path("expr").asText());
            while (m.find()) {
                names.add(m.group());
            }
        }
        return names;
    }

    /** The series names of a Prometheus exposition: each sample line's name, without its labels. */
    static Set<String> exposed(String metrics) {
        Set<String> names = new TreeSet<>();
        for (String line : metrics.split("\n")) {
            if (!line.isBlank() && !line.startsWith("#")) {
                names.add(line.split("[{ ]", 2)[0]);
            }
        }
        return names;
    }
}
