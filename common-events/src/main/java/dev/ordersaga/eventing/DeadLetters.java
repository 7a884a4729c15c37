package dev.ordersaga.eventing;

import dev.ordersaga.events.EventCodec;
import dev.ordersaga.events.EventEnvelope;
import dev.ordersaga.events.SagaEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.StartupEvent;
import io.smallrye.common.annotation.Identifier;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Parks a message that can never be applied on the service's dead-letter topic ({@code <service>.dlq}), with the
 * reason and where it came from, so that it can be looked at and republished once mended.
 *
 * <p>Parking is the consumer's own decision, not the messaging layer's: only a message that no retry can mend is
 * parked. A message that fails for a passing reason, or because the service is shutting down, is never parked;
 * it stays unacknowledged and comes again.
 *
 * <p>Once its cause is mended, an operator republishes a parked message to the service's replay topic
 * ({@code <service>.replay}, {@link #replay}), which the service consumes with its events and no other service
 * does: the service applies it as any delivery, and its inbox lets it through only if it was never applied. A
 * service so writes no topic it consumes from another service. The parked copy stays on the dead-letter topic,
 * which keeps what was parked and when.
 */
@ApplicationScoped
public class DeadLetters {

    public static final String REASON = "dead-letter-reason";
    public static final String CAUSE = "dead-letter-cause";
    public static final String TOPIC = "dead-letter-topic";
    public static final String PARTITION = "dead-letter-partition";
    public static final String OFFSET = "dead-letter-offset";
    /** On a replayed message: the topic it first came from, which a replayed message parked again still names. */
    public static final String REPLAYED_FROM = "replayed-from";
    /** Where a replayed message lay on the topic it was parked from, as its park noted (its dead-letter position). */
    public static final String REPLAYED_FROM_PARTITION = "replayed-from-partition";
    public static final String REPLAYED_FROM_OFFSET = "replayed-from-offset";

    private static final Logger LOG = Logger.getLogger(DeadLetters.class);
    /** A park's send waits this long at most for the topic's metadata or room in the producer's buffer. */
    static final Duration PARK_MAX_BLOCK = Duration.ofSeconds(5);
    /** Then at most this long for Kafka to take it. */
    static final Duration PARK_DELIVERY_TIMEOUT = Duration.ofSeconds(20);
    private static final String PARKED = "saga.consumer.parked";
    private static final String INCOMING = "mp.messaging.incoming.";
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    /** A parked message: where it lies on the dead-letter topic, why it was parked, and where it came from. */
    public record Parked(int partition, long offset, Instant parkedAt, String reason, String cause, String topic,
                         Integer originalPartition, Long originalOffset, String eventId, String eventType,
                         String orderId, String correlationId) {

        /** What the headers do not say (a message that came without them) is taken from the envelope, if it reads. */
        static Parked of(ConsumerRecord<String, String> record) {
            String originalPartition = header(record, PARTITION);
            String originalOffset = header(record, OFFSET);
            String eventId = header(record, EventHeaders.EVENT_ID);
            String eventType = header(record, EventHeaders.EVENT_TYPE);
            String correlationId = header(record, EventHeaders.CORRELATION_ID);
            if (eventId == null || eventType == null || correlationId == null) {
                Optional<EventEnvelope<SagaEvent>> envelope = readable(record.value());
                eventId = eventId != null ? eventId : envelope.map(e -> e.eventId().toString()).orElse(null);
                eventType = eventType != null ? eventType : envelope.map(EventEnvelope::type).orElse(null);
                correlationId = correlationId != null ? correlationId : envelope.map(EventEnvelope::correlationId).orElse(null);
            }
            return new Parked(record.partition(), record.offset(), Instant.ofEpochMilli(record.timestamp()),
                    header(record, REASON), header(record, CAUSE), header(record, TOPIC),
                    originalPartition == null ? null : Integer.valueOf(originalPartition),
                    originalOffset == null ? null : Long.valueOf(originalOffset),
                    eventId, eventType, record.key(), correlationId);
        }

        private static Optional<EventEnvelope<SagaEvent>> readable(String value) {
            try {
                return value == null ? Optional.empty() : Optional.of(EventCodec.decode(value));
            } catch (RuntimeException malformed) {
                return Optional.empty();
            }
        }
    }

    /** Where a replayed message was republished: the service's replay topic. */
    public record Replayed(String eventId, String topic, int partition, long offset) {
    }

    @ConfigProperty(name = "eventing.service-name")
    String serviceName;

    @ConfigProperty(name = "eventing.inbox.retention", defaultValue = "P8D")
    Duration inboxRetention;

    /** Every kafka.* setting of the service, as its channels get them. */
    @Inject
    @Identifier("default-kafka-broker")
    Map<String, Object> kafkaBroker;

    @Inject
    MeterRegistry meters;

    /**
     * Fault injection for the tests: the first this many parks of each message fail as they do while Kafka is away, so
     * that a test can show the consumer carries on. Counted per message, not for the service: a message another test
     * left on the topic, parked meanwhile, does not take the failures meant for the test's own.
     */
    @ConfigProperty(name = "eventing.dead-letters.fault.failed-parks", defaultValue = "0")
    int failedParks;

    private final Map<String, Integer> parksFailed = new ConcurrentHashMap<>();
    private KafkaProducer<String, String> producer;

    public String topic() {
        return serviceName + ".dlq";
    }

    public String replayTopic() {
        return serviceName + ".replay";
    }

    /**
     * The topic a message first came from: its own, or for one on a replay topic the topic it was parked from. The
     * header counts on a replay topic only, where DeadLetters alone writes.
     */
    public static String origin(ConsumerRecord<String, String> record) {
        String replayedFrom = record.topic().endsWith(".replay") ? header(record, REPLAYED_FROM) : null;
        return replayedFrom != null ? replayedFrom : record.topic();
    }

    /**
     * Partition and offset of a message on the topic it first came from ({@link #origin}): a replayed one's where it
     * lay before it was parked, not its place on the replay topic, which the origin topic's name would misplace.
     */
    static String[] originalPosition(ConsumerRecord<String, String> record) {
        String partition = header(record, REPLAYED_FROM_PARTITION);
        String offset = header(record, REPLAYED_FROM_OFFSET);
        if (!origin(record).equals(record.topic()) && partition != null && offset != null) {
            return new String[] {partition, offset};
        }
        return new String[] {Integer.toString(record.partition()), Long.toString(record.offset())};
    }

    public void park(ConsumerRecord<String, String> record, Throwable reason) {
        String[] position = originalPosition(record);
        ProducerRecord<String, String> parked = new ProducerRecord<>(topic(), null, record.key(), record.value());
        for (Header header : record.headers()) {
            parked.headers().add(header);
        }
        parked.headers()
                .add(REASON, utf8(String.valueOf(reason.getMessage())))
                .add(CAUSE, utf8(reason.getClass().getName()))
                .add(TOPIC, utf8(origin(record)))
                .add(PARTITION, utf8(position[0]))
                .add(OFFSET, utf8(position[1]));
        if (failedParks > 0 && parksFailed.merge(record.topic() + "-" + record.partition() + "@" + record.offset(), 1,
                Integer::sum) <= failedParks) {
            throw new IllegalStateException("could not park a message of " + record.topic() + " on " + topic()
                    + " (eventing.dead-letters.fault.failed-parks)");
        }
        try {
            producer().send(parked).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while parking a message of " + record.topic(), e);
        } catch (Exception e) {
            // not parked, so not acknowledged either: the message comes again
            throw new IllegalStateException("could not park a message of " + record.topic() + " on " + topic(), e);
        }
        meters.counter(PARKED, "topic", origin(record)).increment();
    }

    /**
     * The parked counter of every topic the service's channels consume, at 0 from the start, as the other counters an
     * alert watches: a rule on its increase then sees the first park too, which would otherwise create it at 1. A
     * service none of whose channels consumes its replay topic does not start.
     */
    void countFromTheStart(@Observes StartupEvent event) {
        Set<String> consumed = consumedTopics(ConfigProvider.getConfig());
        if (!consumed.contains(replayTopic())) {
            // an operator's replay would be published and never applied
            throw new IllegalStateException("no incoming channel consumes " + replayTopic() + ", where parked messages "
                    + "are replayed; the channels consume " + consumed);
        }
        // a message parked from the replay topic counts under the topic it first came from
        consumed.stream().filter(topic -> !topic.equals(replayTopic()))
                .forEach(topic -> meters.counter(PARKED, "topic", topic));
    }

    /** The topics the incoming channels' {@code topic} or {@code topics} settings name. */
    static Set<String> consumedTopics(Config config) {
        Set<String> topics = new TreeSet<>();
        for (String name : config.getPropertyNames()) {
            if (name.startsWith(INCOMING) && (name.endsWith(".topic") || name.endsWith(".topics"))) {
                config.getOptionalValue(name, String.class).ifPresent(value -> Arrays.stream(value.split(","))
                        .map(String::strip).filter(topic -> !topic.isEmpty()).forEach(topics::add));
            }
        }
        return topics;
    }

    /**
     * Kafka did not answer an operator's read or replay in time (away, or its coordinator moving): a passing failure,
     * to be tried again, where an error of the service would be a 500.
     */
    public static final class KafkaAway extends RuntimeException {
        KafkaAway(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The last {@code limit} messages parked on the dead-letter topic, the latest first.
     *
     * @param before null for the latest; else only messages below this offset (in each partition), the next page
     */
    public List<Parked> list(int limit, Long before) {
        try {
            return readLast(limit, before);
        } catch (KafkaException e) {
            throw new KafkaAway("could not read " + topic() + ": " + e.getMessage(), e);
        }
    }

    private List<Parked> readLast(int limit, Long before) {
        try (KafkaConsumer<String, String> reader = reader()) {
            List<TopicPartition> partitions = reader.partitionsFor(topic(), READ_TIMEOUT).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            reader.assign(partitions);
            Map<TopicPartition, Long> begin = reader.beginningOffsets(partitions, READ_TIMEOUT);
            Map<TopicPartition, Long> end = new HashMap<>(reader.endOffsets(partitions, READ_TIMEOUT));
            if (before != null) {
                end.replaceAll((p, last) -> Math.max(begin.get(p), Math.min(last, before)));
            }
            partitions.forEach(p -> reader.seek(p, Math.max(begin.get(p), end.get(p) - limit)));
            List<Parked> parked = new ArrayList<>();
            Instant deadline = Instant.now().plus(READ_TIMEOUT);
            while (partitions.stream().anyMatch(p -> reader.position(p) < end.get(p))) {
                if (Instant.now().isAfter(deadline)) {
                    throw new KafkaAway("could not read " + topic() + " to its end within " + READ_TIMEOUT, null);
                }
                reader.poll(Duration.ofMillis(200)).forEach(record -> {
                    // a poll reads on past a page's end
                    if (record.offset() < end.get(new TopicPartition(record.topic(), record.partition()))) {
                        parked.add(Parked.of(record));
                    }
                });
            }
            // by offset, the broker's order of arrival: parkedAt is the parking replica's clock, and a page's next
            // begins below its last entry's offset (the dead-letter topics have one partition)
            parked.sort(Comparator.comparing(Parked::offset).thenComparing(Parked::partition).reversed());
            return parked.subList(0, Math.min(limit, parked.size()));
        }
    }

    /** A parked event too old to republish: the consumers that applied it may have forgotten that they did. */
    public static final class TooOldToReplay extends RuntimeException {
        TooOldToReplay(String message) {
            super(message);
        }
    }

    /**
     * Republishes the message parked at the given place to the service's replay topic, with its key, value and
     * headers as they were before it was parked, and the topic it came from ({@link #REPLAYED_FROM}). The service
     * hears it again, and skips it by its inbox if it applied it meanwhile (a replay before this one); the inbox keeps
     * an event's id for {@code eventing.inbox.retention} after it was applied, so an event that occurred longer ago
     * than that, less a day for the consumer's lag then or now, is refused: had it been applied on time, it would be
     * forgotten and applied twice. (order-service also knows an applied fact by its timeline, but the other services
     * do not.) A message whose envelope does not read has applied nowhere.
     *
     * @return where it was republished; empty if nothing is parked at that place
     * @throws TooOldToReplay if the event occurred before the inboxes' memory of it is sure
     */
    public Optional<Replayed> replay(int partition, long offset, String operator) {
        Optional<ConsumerRecord<String, String>> found;
        try {
            found = read(partition, offset);
        } catch (KafkaException e) {
            throw new KafkaAway("could not read " + topic() + " " + partition + "@" + offset + ": " + e.getMessage(),
                    e);
        }
        if (found.isEmpty()) {
            return Optional.empty();
        }
        ConsumerRecord<String, String> record = found.get();
        Instant replayableSince = Instant.now().minus(inboxRetention).plus(Duration.ofDays(1));
        Optional<Instant> occurredAt = Parked.readable(record.value()).map(EventEnvelope::occurredAt);
        if (occurredAt.isPresent() && occurredAt.get().isBefore(replayableSince)) {
            throw new TooOldToReplay("the event occurred at " + occurredAt.get() + ", before " + replayableSince
                    + " (eventing.inbox.retention " + inboxRetention + " less a day): had it been applied since, the "
                    + "inbox may have forgotten it and it would be applied twice; apply what it should have done by hand");
        }
        String origin = header(record, TOPIC);
        if (origin == null) {
            throw new IllegalStateException(topic() + " " + partition + "@" + offset + " does not say where it came from");
        }
        ProducerRecord<String, String> again = new ProducerRecord<>(replayTopic(), null, record.key(), record.value());
        for (Header header : record.headers()) {
            if (!header.key().startsWith("dead-letter-") && !header.key().startsWith(REPLAYED_FROM)) {
                again.headers().add(header);
            }
        }
        again.headers().add(REPLAYED_FROM, utf8(origin));
        String originPartition = header(record, PARTITION);
        String originOffset = header(record, OFFSET);
        if (originPartition != null && originOffset != null) {
            again.headers().add(REPLAYED_FROM_PARTITION, utf8(originPartition))
                    .add(REPLAYED_FROM_OFFSET, utf8(originOffset));
        }
        RecordMetadata written;
        try {
            written = producer().send(again).get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while republishing a parked message to " + replayTopic(), e);
        } catch (Exception e) {
            throw new KafkaAway("could not republish a parked message to " + replayTopic(), e);
        }
        Parked parked = Parked.of(record);
        Replayed replayed = new Replayed(parked.eventId(), replayTopic(), written.partition(), written.offset());
        meters.counter("saga.consumer.replayed", "topic", origin).increment();
        String line = String.format("Operator %s republished parked %s %s of order %s (from %s; %s %d@%d, parked for: %s) "
                        + "to %s %d@%d", operator, parked.eventType(), parked.eventId(), record.key(), origin, topic(),
                partition, offset, parked.reason(), replayTopic(), written.partition(), written.offset());
        if (parked.correlationId() == null) {
            // a message that was no event has no saga to follow; its replay is logged all the same, and answered
            LOG.warn(line);
        } else {
            // logged under the saga's correlation id, so that following a saga through the logs shows the replay too
            try (Correlation.Scope ignored = Correlation.open(parked.correlationId(), null)) {
                LOG.warn(line);
            }
        }
        return Optional.of(replayed);
    }

    private Optional<ConsumerRecord<String, String>> read(int partition, long offset) {
        try (KafkaConsumer<String, String> reader = reader()) {
            List<PartitionInfo> partitions = reader.partitionsFor(topic(), READ_TIMEOUT);
            if (partitions.stream().noneMatch(p -> p.partition() == partition)) {
                return Optional.empty();
            }
            TopicPartition place = new TopicPartition(topic(), partition);
            reader.assign(List.of(place));
            long begin = reader.beginningOffsets(List.of(place), READ_TIMEOUT).get(place);
            long end = reader.endOffsets(List.of(place), READ_TIMEOUT).get(place);
            if (offset < begin || offset >= end) {
                return Optional.empty();
            }
            reader.seek(place, offset);
            Instant deadline = Instant.now().plus(READ_TIMEOUT);
            while (reader.position(place) <= offset) {
                if (Instant.now().isAfter(deadline)) {
                    throw new KafkaAway("could not read " + topic() + " " + partition + "@" + offset + " within "
                            + READ_TIMEOUT, null);
                }
                for (ConsumerRecord<String, String> record : reader.poll(Duration.ofMillis(200))) {
                    if (record.offset() == offset) {
                        return Optional.of(record);
                    }
                }
            }
            return Optional.empty();
        }
    }

    private KafkaConsumer<String, String> reader() {
        return new KafkaConsumer<>(KafkaClients.readerConfig(kafkaBroker, serviceName + "-dead-letter-reader"));
    }

    static String header(ConsumerRecord<String, String> record, String name) {
        Header header = record.headers().lastHeader(name);
        // Kafka allows a header without a value; a parked message keeps the headers it came with
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private synchronized KafkaProducer<String, String> producer() {
        if (producer == null) {
            Properties p = KafkaClients.producerConfig(kafkaBroker, serviceName + "-dead-letters");
            // a park's send is over before park stops waiting for it (5 + 20 s against 30): a park that failed is then
            // not still queued in the producer when the consumer's next attempt parks the message again
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(PARK_MAX_BLOCK.toMillis()));
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(PARK_DELIVERY_TIMEOUT.toMillis()));
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
