package dev.ordersaga.testing;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.awaitility.Awaitility;

/**
 * Reads topics in the background, without a consumer group, and keeps what it saw, so that a test can wait for
 * an event and then assert on everything that arrived (duplicates included).
 */
public final class KafkaTopicProbe implements AutoCloseable {

    private final KafkaConsumer<String, String> consumer;
    private final List<Received> received = new ArrayList<>();
    private final List<TopicPartition> partitions = new ArrayList<>();
    /** Where the poller stands in each partition after its last poll: what it has read is below. */
    private final Map<TopicPartition, Long> positions = new ConcurrentHashMap<>();
    private final Thread poller;
    private final CountDownLatch positioned = new CountDownLatch(1);
    private volatile boolean closed;

    /** A record as it arrived, with the time it arrived. */
    public record Received(ConsumerRecord<String, String> record, long receivedAtMillis) {

        public String key() {
            return record.key();
        }

        public String value() {
            return record.value();
        }

        public String header(String name) {
            Header header = record.headers().lastHeader(name);
            return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
        }
    }

    private KafkaTopicProbe(Collection<String> topics, boolean fromBeginning) {
        consumer = new KafkaConsumer<>(consumerProperties());
        for (String topic : topics) {
            consumer.partitionsFor(topic, Duration.ofSeconds(30))
                    .forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
        }
        consumer.assign(partitions);
        if (fromBeginning) {
            consumer.seekToBeginning(partitions);
        } else {
            consumer.seekToEnd(partitions);
        }
        // resolve the positions now: "from now" means before the test acts, not when the first poll happens
        partitions.forEach(tp -> positions.put(tp, consumer.position(tp)));
        poller = new Thread(this::poll, "kafka-probe-" + String.join(",", topics));
        poller.setDaemon(true);
        poller.start();
    }

    /** A consumer of no group, which commits nothing. */
    private static Properties consumerProperties() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestStack.kafkaBootstrap());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return p;
    }

    /** Sees what is published from now on. */
    public static KafkaTopicProbe fromNow(String... topics) {
        return new KafkaTopicProbe(List.of(topics), false);
    }

    /** Sees everything the topics retain. */
    public static KafkaTopicProbe fromBeginning(String... topics) {
        return new KafkaTopicProbe(List.of(topics), true);
    }

    private void poll() {
        try {
            while (!closed) {
                var records = consumer.poll(Duration.ofMillis(100));
                long now = System.currentTimeMillis();
                synchronized (received) {
                    records.forEach(r -> received.add(new Received(r, now)));
                }
                // after the records are kept: a position read as caught up means they are in all()
                partitions.forEach(tp -> positions.put(tp, consumer.position(tp)));
            }
        } catch (WakeupException e) {
            // closing
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    public List<Received> all() {
        synchronized (received) {
            return List.copyOf(received);
        }
    }

    public List<Received> matching(Predicate<Received> predicate) {
        return all().stream().filter(predicate).toList();
    }

    /** Waits until a matching record arrived and returns the first one. */
    public Received await(Predicate<Received> predicate, Duration timeout) {
        return Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> matching(predicate), list -> !list.isEmpty()).get(0);
    }

    public Received awaitKey(String key, Duration timeout) {
        return await(r -> key.equals(r.key()), timeout);
    }

    /**
     * Waits until the probe has read every record its topics hold now. What nothing publishes any more (its publisher
     * stopped) is then in {@link #all()} or never will be: a test can assert that a record is not there without
     * waiting for a while to see none arrive.
     */
    public void awaitCaughtUp(Duration timeout) {
        Map<TopicPartition, Long> ends;
        try (KafkaConsumer<String, String> looker = new KafkaConsumer<>(consumerProperties())) {
            ends = looker.endOffsets(partitions, timeout);
        }
        Awaitility.await("the probe at the topics' ends " + ends).atMost(timeout).pollInterval(Duration.ofMillis(50))
                .until(() -> ends.entrySet().stream().allMatch(end -> positions.get(end.getKey()) >= end.getValue()));
    }

    @Override
    public void close() {
        closed = true;
        consumer.wakeup();
        try {
            poller.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
