package dev.ordersaga.eventing;

import dev.ordersaga.http.Problem;
import dev.ordersaga.http.ProblemMappers;
import jakarta.ws.rs.core.Response;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An operator's look at the parked messages while Kafka is away is a passing failure: 503 with Retry-After, as
 * problem+json, where it was Quarkus' own bare 500.
 */
class DeadLettersKafkaAwayTest {

    @Test
    void aListKafkaDoesNotAnswerIsKafkaAwayAndAnswered503() {
        DeadLetters deadLetters = new DeadLetters();
        deadLetters.serviceName = "order-service";
        // a port nothing listens on: every metadata request goes unanswered until the read's timeout
        deadLetters.kafkaBroker = Map.of("bootstrap.servers", "127.0.0.1:1");

        assertThatThrownBy(() -> deadLetters.list(10, null)).isInstanceOfSatisfying(DeadLetters.KafkaAway.class,
                away -> {
                    Response answer = new ProblemMappers().kafkaAway(away);
                    assertThat(answer.getStatus()).isEqualTo(503);
                    assertThat(answer.getHeaderString("Retry-After")).isEqualTo("5");
                    assertThat(answer.getMediaType()).hasToString(Problem.MEDIA_TYPE);
                    assertThat(((Problem) answer.getEntity()).detail()).startsWith("could not read order-service.dlq");
                });
    }
}
