package dev.ordersaga.testing;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Puts raw messages on a topic, as a misbehaving or duplicating producer would. */
public final class KafkaTestProducer implements AutoCloseable {

    private final KafkaProducer<String, String> producer;

    public KafkaTestProducer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestStack.kafkaBootstrap());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producer = new KafkaProducer<>(p);
    }

    /** Sends and waits for the broker's acknowledgement, so that sends are ordered within a key. */
    public void send(String topic, String key, String value, Header... headers) {
        try {
            producer.send(new ProducerRecord<>(topic, null, key, value, List.of(headers))).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("could not send to " + topic, e);
        }
    }

    @Override
    public void close() {
        producer.close();
    }
}
