package dev.ordersaga.systemtest;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The alerting rules are whole (each an expression, a severity a pager can route on, and what to tell the person it
 * wakes) and name only series the README documents; that the packaged services expose them is
 * {@link EveryServiceRelaysIT}'s.
 */
class AlertRulesTest {

    @Test
    void everyRuleIsWholeAndNamesOnlyDocumentedSeries() throws Exception {
        AlertRules rules = AlertRules.read();
        assertThat(rules.rules()).isNotEmpty();
        Set<String> names = new HashSet<>();
        for (JsonNode rule : rules.rules()) {
            String name = rule.path("alert").asText();
            assertThat(name).as("a rule's name").isNotBlank();
            assertThat(names.add(name)).as(name + " named once").isTrue();
            assertThat(rule.path("expr").asText()).as(name).isNotBlank();
            assertThat(rule.path("labels").path("severity").asText()).as(name).isIn("critical", "warning");
            assertThat(rule.path("annotations").path("summary").asText()).as(name).isNotBlank();
            assertThat(rule.path("annotations").path("description").asText()).as(name).isNotBlank();
        }
        String readme = Files.readString(RepoRoot.path().resolve("README.md"));
        assertThat(rules.series()).as("the series the rules watch").isNotEmpty()
                .allSatisfy(series -> assertThat(readme).as("the README documents " + series).contains(series));
    }

    @Test
    void theSeriesOfAnExpositionAreItsSampleNames() {
        String metrics = """
                # HELP saga_orders_stalled Sagas stalled
                # TYPE saga_orders_stalled gauge
                saga_orders_stalled 0.0
                saga_consumer_parked_total{topic="order.events"} 1.0
                """;
        assertThat(AlertRules.exposed(metrics))
                .containsExactlyInAnyOrder("saga_orders_stalled", "saga_consumer_parked_total");
    }
}
