package dev.ordersaga.eventing;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

class KafkaClientsTest {

    @Test
    void theBrokersSecuritySettingsReachTheRuntimesProducers() {
        Properties p = KafkaClients.producerConfig(Map.of(
                "bootstrap.servers", "kafka-0:9093",
                "security.protocol", "SASL_SSL",
                "sasl.mechanism", "SCRAM-SHA-512",
                "ssl.truststore.location", "/etc/kafka/truststore.p12"), "order-cdc-relay");

        assertThat(p).containsEntry("bootstrap.servers", "kafka-0:9093")
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "SCRAM-SHA-512")
                .containsEntry("ssl.truststore.location", "/etc/kafka/truststore.p12")
                .containsEntry("client.id", "order-cdc-relay");
    }

    @Test
    void noSettingWeakensDeliveryAndConsumerSettingsAreLeftOut() {
        Properties p = KafkaClients.producerConfig(Map.of(
                "bootstrap.servers", "localhost:9092",
                "acks", "0",
                "enable.idempotence", false,
                "group.id", "order-service",
                "auto.offset.reset", "earliest"), "order-dead-letters");

        assertThat(p).containsEntry("acks", "all").containsEntry("enable.idempotence", "true")
                .doesNotContainKeys("group.id", "auto.offset.reset");
    }
}
