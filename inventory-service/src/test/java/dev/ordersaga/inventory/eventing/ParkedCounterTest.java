package dev.ordersaga.inventory.eventing;

import dev.ordersaga.eventing.DeadLetters;
import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The parked counter of the topic the service consumes exists from the start, before anything was parked: an alert
 * rule on its increase sees the first park, which would otherwise create the series at 1. A profile of its own, so
 * that the service is freshly started: the series is there at 0 then, unless this start has parked a message an
 * earlier test left on the topic already, and that park is what it counts.
 */
@QuarkusTest
@TestProfile(ParkedCounterTest.FreshStart.class)
@WithTestResource(StackTestResource.class)
class ParkedCounterTest {

    private static final Pattern PARKED_OF_ORDER_EVENTS =
            Pattern.compile("(?m)^saga_consumer_parked_total\\{[^}]*topic=\"order\\.events\"[^}]*} (\\S+)$");

    public static class FreshStart implements QuarkusTestProfile {
    }

    /** /q/metrics on the management interface (not the API's port); the URL it hands over ends in its root, /q */
    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    @Inject
    DeadLetters deadLetters;

    @Test
    void theParkedCounterOfTheConsumedTopicIsThereBeforeThisTestParksAndCountsItsPark() {
        double before = parkedOfOrderEvents();

        // parked as the consumer parks, not produced on the topic: the other services' tests would park it too
        String key = UUID.randomUUID().toString();
        deadLetters.park(new ConsumerRecord<>(Topics.ORDER_EVENTS, 0, 0L, key, "{\"this is\": \"not an event\"}"),
                new IllegalArgumentException("parked by " + getClass().getSimpleName()));

        // at least: a message left on the topic may be parked meanwhile
        assertThat(parkedOfOrderEvents()).isGreaterThanOrEqualTo(before + 1);
    }

    private double parkedOfOrderEvents() {
        String metrics = given().get(metricsUrl).then().statusCode(200).extract().asString();
        Matcher series = PARKED_OF_ORDER_EVENTS.matcher(metrics);
        assertThat(series.find()).as("saga_consumer_parked_total of order.events among the metrics").isTrue();
        return Double.parseDouble(series.group(1));
    }
}
