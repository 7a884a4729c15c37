package dev.ordersaga.eventing;

import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.common.annotation.Identifier;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Parks a message that can never be applied on the service's dead-letter topic ({@code <service>.dlq}), with the
 * reason and where it came from, so that it can be looked at and republished once mended.
 *
 * <p>Parking is the consumer's own decision, not the messaging layer's: only a message that no retry can mend is
 * parked. A message that fails for a passing reason, or because the service is shutting down, is never parked;
 * it stays unacknowledged and comes again.
 */
@ApplicationScoped
public class DeadLetters {

    public static final String REASON = "dead-letter-reason";
    public static final String CAUSE = "dead-letter-cause";
    public static final String TOPIC = "dead-letter-topic";
    public static final String PARTITION = "dead-letter-partition";
    public static final String OFFSET = "dead-letter-offset";

    @ConfigProperty(name = "eventing.service-name")
    String serviceName;

    /** Every kafka.* setting of the service, as its channels get them. */
    @Inject
    @Identifier("default-kafka-broker")
    Map<String, Object> kafkaBroker;

    @Inject
    MeterRegistry meters;

    private KafkaProducer<String, String> producer;

    public String topic() {
        return serviceName + ".dlq";
    }

    public void park(ConsumerRecord<String, String> record, Throwable reason) {
        ProducerRecord<String, String> parked = new ProducerRecord<>(topic(), null, record.key(), record.value());
        for (Header header : record.headers()) {
            parked.headers().add(header);
        }
        parked.headers()
                .add(REASON, utf8(String.valueOf(reason.getMessage())))
                .add(CAUSE, utf8(reason.getClass().getName()))
                .add(TOPIC, utf8(record.topic()))
                .add(PARTITION, utf8(Integer.toString(record.partition())))
                .add(OFFSET, utf8(Long.toString(record.offset())));
        try {
            producer().send(parked).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while parking a message of " + record.topic(), e);
        } catch (Exception e) {
            // not parked, so not acknowledged either: the message comes again
            throw new IllegalStateException("could not park a message of " + record.topic() + " on " + topic(), e);
        }
        meters.counter("saga.consumer.parked", "topic", record.topic()).increment();
    }

    private synchronized KafkaProducer<String, String> producer() {
        if (producer == null) {
            Properties p = KafkaClients.producerConfig(kafkaBroker, serviceName + "-dead-letters");
            producer = new KafkaProducer<>(p);
        }
        return producer;
    }

    @PreDestroy
    synchronized void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(5));
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
