package dev.ordersaga.eventing;

import dev.ordersaga.retry.Backoff;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A message that keeps failing stops its channel when the consumer's own retries are spent, not earlier: SmallRye's
 * throttled commit strategy fails the channel once a record has waited {@code unprocessed-record-max-age}, so that
 * limit must outlast every attempt and every back-off between them, read from IncomingEvents' own defaults.
 */
class IncomingEventsBudgetTest {

    /** How long one attempt may wait for a pooled connection (Agroal's default acquisition timeout). */
    private static final Duration ATTEMPT_WAIT = Duration.ofSeconds(5);

    @Test
    void theConnectorWaitsLongerForARecordThanTheConsumerRetriesIt() throws Exception {
        int attempts = Integer.parseInt(defaultOf("maxAttempts"));
        Backoff backoff = new Backoff(Duration.parse(defaultOf("firstBackoff")), Duration.parse(defaultOf("maxBackoff")));
        Duration sleeps = Duration.ZERO;
        for (int attempt = 1; attempt < attempts; attempt++) {
            sleeps = sleeps.plus(backoff.delayAfter(attempt));
        }
        // the batch's own attempt comes first, then each event's; a poison message's attempts each try to park it,
        // which takes the longest while Kafka is away: a park that went through after the channel had failed would
        // be acknowledged to nobody, and the message parked again after the restart
        Duration park = DeadLetters.PARK_MAX_BLOCK.plus(DeadLetters.PARK_DELIVERY_TIMEOUT);
        Duration budget = sleeps.plus(ATTEMPT_WAIT.multipliedBy(attempts + 1L)).plus(park.multipliedBy(attempts));

        Duration maxAge = Duration.ofMillis(Long.parseLong(sharedConfig()
                .getProperty("mp.messaging.connector.smallrye-kafka.throttled.unprocessed-record-max-age.ms")));

        assertThat(sleeps).as("the back-off alone").isEqualTo(Duration.ofMillis(71_300));
        assertThat(maxAge).isGreaterThan(budget);
    }

    private static String defaultOf(String field) throws NoSuchFieldException {
        return IncomingEvents.class.getDeclaredField(field).getAnnotation(ConfigProperty.class).defaultValue();
    }

    private static Properties sharedConfig() throws IOException {
        Properties properties = new Properties();
        try (InputStream in = IncomingEvents.class.getResourceAsStream("/META-INF/microprofile-config.properties")) {
            assertThat(in).as("common-events' shared configuration").isNotNull();
            properties.load(in);
        }
        return properties;
    }
}
