package dev.ordersaga.eventing;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The clients the runtime makes for itself (the relay's producer, the dead letters' producer and reader). They start from the broker
 * settings every Kafka client of the service shares (all of its {@code kafka.*} configuration, so TLS and SASL set
 * for the channels apply to them too), keep only what the client understands, and lay over it what the outbox's
 * guarantees need, which no setting may weaken: every replica acknowledges, and a retried send is written once.
 */
public final class KafkaClients {

    private KafkaClients() {
    }

    public static Properties producerConfig(Map<String, ?> broker, String clientId) {
        Properties p = understood(broker, ProducerConfig.configNames());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    /**
     * A consumer that reads partitions it is assigned and belongs to no group: it commits nothing, so reading with it
     * moves no consumer group's offsets.
     */
    public static Properties readerConfig(Map<String, ?> broker, String clientId) {
        Properties p = understood(broker, ConsumerConfig.configNames());
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return p;
    }

    private static Properties understood(Map<String, ?> broker, Set<String> names) {
        Properties p = new Properties();
        broker.forEach((name, value) -> {
            if (value != null && names.contains(name)) {
                p.put(name, value.toString());
            }
        });
        return p;
    }
}
