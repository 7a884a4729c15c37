package dev.ordersaga.inventory.eventing;

import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.net.URL;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The parked counter of the topic the service consumes exists from the start, at 0, before anything was parked: an
 * alert rule on its increase sees the first park, which would otherwise create the series at 1. A profile of its own,
 * so that the service is freshly started and no other test's park counts.
 */
@QuarkusTest
@TestProfile(ParkedCounterTest.FreshStart.class)
@WithTestResource(StackTestResource.class)
class ParkedCounterTest {

    public static class FreshStart implements QuarkusTestProfile {
    }

    /** /q/metrics on the management interface (not the API's port); the URL it hands over ends in its root, /q */
    @TestHTTPResource(value = "/metrics", management = true)
    URL metricsUrl;

    @Test
    void theParkedCounterOfTheConsumedTopicReadsZeroFromTheStart() {
        String metrics = given().get(metricsUrl).then().statusCode(200).extract().asString();
        assertThat(metrics).containsPattern("(?m)^saga_consumer_parked_total\\{[^}]*topic=\"order\\.events\"[^}]*} 0\\.0$");
    }
}
