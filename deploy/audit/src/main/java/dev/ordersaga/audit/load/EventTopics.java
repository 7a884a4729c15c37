package dev.ordersaga.audit.load;

import dev.ordersaga.audit.Snapshot.Parked;
import dev.ordersaga.audit.Snapshot.TopicEvent;
import dev.ordersaga.audit.Snapshot.TopicStats;
import dev.ordersaga.eventing.DeadLetters;
import dev.ordersaga.eventing.EventHeaders;
import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.MalformedEventException;
import dev.ordersaga.events.SagaEvent;
import dev.ordersaga.events.Topics;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;

/**
 * Reads the four event topics and the four dead-letter topics from the beginning up to the end offsets taken when it
 * starts: a consumer without a group (no offsets committed, no other consumer disturbed) that is assigned every
 * partition. Records of orders in scope are kept, decoded with the contracts' {@link EventCodec}; the others are only
 * counted.
 */
public final class EventTopics {

    /** A stretch without progress after which the topics count as unreadable. */
    private static final Duration STALL = Duration.ofSeconds(30);

    /** What was read: the records of orders in scope, those of them parked, and counts. */
    public record Read(List<TopicEvent> events, List<Parked> parked, TopicStats stats) {
    }

    private final String bootstrapServers;

    public EventTopics(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }

    public Read read(Set<UUID> scope) {
        Map<String, Long> recordsRead = new LinkedHashMap<>();
        Topics.EVENT_TOPICS.forEach(t -> recordsRead.put(t, 0L));
        List<TopicEvent> events = new ArrayList<>();
        List<Parked> parked = new ArrayList<>();
        long undecodable = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : Topics.EVENT_TOPICS) {
                List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(15));
                if (infos == null || infos.isEmpty()) {
                    throw new LoadException("topic " + topic + " does not exist at " + bootstrapServers);
                }
                infos.forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
            }
            for (String topic : Topics.DLQ_TOPICS) {
                // a dead-letter topic is made by the stack's scripts, or by the first park where topics are auto-created
                List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(15));
                if (infos != null) {
                    infos.forEach(p -> partitions.add(new TopicPartition(p.topic(), p.partition())));
                }
            }
            consumer.assign(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(15));
            consumer.seekToBeginning(partitions);
            Set<TopicPartition> remaining = new HashSet<>();
            for (TopicPartition tp : partitions) {
                if (consumer.position(tp, Duration.ofSeconds(15)) < end.get(tp)) {
                    remaining.add(tp);
                }
            }
            consumer.pause(partitions.stream().filter(tp -> !remaining.contains(tp)).toList());
            long lastProgress = System.nanoTime();
            while (!remaining.isEmpty()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : records) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    if (r.offset() >= end.get(tp)) {
                        continue; // written after the audit started
                    }
                    Map<String, String> headers = headers(r.headers());
                    Optional<TopicEvent> event = toEvent(r.topic(), r.partition(), r.offset(), r.key(), r.value(),
                            headers, scope);
                    if (Topics.DLQ_TOPICS.contains(r.topic())) {
                        event.ifPresent(message -> parked.add(new Parked(message, headers.get(DeadLetters.REASON))));
                        continue;
                    }
                    recordsRead.merge(r.topic(), 1L, Long::sum);
                    if (event.isPresent()) {
                        events.add(event.get());
                        if (event.get().eventId() == null) {
                            undecodable++;
                        }
                    }
                }
                if (!records.isEmpty()) {
                    lastProgress = System.nanoTime();
                }
                List<TopicPartition> done = new ArrayList<>();
                for (TopicPartition tp : remaining) {
                    if (consumer.position(tp, Duration.ofSeconds(15)) >= end.get(tp)) {
                        done.add(tp);
                    }
                }
                done.forEach(remaining::remove);
                consumer.pause(done);
                if (!remaining.isEmpty() && System.nanoTime() - lastProgress > STALL.toNanos()) {
                    throw new LoadException("reading the topics at " + bootstrapServers + " made no progress for "
                            + STALL.toSeconds() + " s; still unread: " + remaining);
                }
            }
        } catch (KafkaException e) {
            throw new LoadException("cannot read the event topics at " + bootstrapServers + ": " + e.getMessage(), e);
        }
        return new Read(events, parked, new TopicStats(recordsRead, undecodable));
    }

    private Properties config() {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "order-saga-audit");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return p;
    }

    private static Map<String, String> headers(Headers headers) {
        Map<String, String> values = new LinkedHashMap<>();
        for (Header h : headers) {
            if (h.value() != null) {
                values.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
            }
        }
        return values;
    }

    /**
     * A record as the audit sees it, if it belongs to an order in scope (its key is the order id). Its id, type and
     * order come from the envelope; a record that does not decode falls back on its headers, and without an eventId
     * header it is kept with a null id (counted as undecodable).
     */
    static Optional<TopicEvent> toEvent(String topic, int partition, long offset, String key, String value,
                                        Map<String, String> headers, Set<UUID> scope) {
        UUID keyed = uuid(key);
        if (keyed == null || !scope.contains(keyed)) {
            return Optional.empty();
        }
        if (value != null) {
            try {
                EventEnvelope<SagaEvent> envelope = EventCodec.decode(value);
                return Optional.of(new TopicEvent(topic, partition, offset, envelope.orderId(), envelope.eventId(),
                        envelope.type()));
            } catch (MalformedEventException | IllegalArgumentException e) {
                // an unknown type (UnknownEventTypeException is one) or a broken value: the headers may still say
            }
        }
        return Optional.of(new TopicEvent(topic, partition, offset, keyed, uuid(headers.get(EventHeaders.EVENT_ID)),
                headers.get(EventHeaders.EVENT_TYPE)));
    }

    private static UUID uuid(String text) {
        if (text == null) {
            return null;
        }
        try {
            return UUID.fromString(text.strip());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
