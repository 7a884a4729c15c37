package dev.ordersaga.systemtest;

import dev.ordersaga.events.Topics;
import dev.ordersaga.testing.TestStack;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * How far each service's consumer group is behind the topics it reads, from the broker's own records: the records
 * published to them that the group has not committed as applied. A run is quiet only when every group is at 0; an order
 * that settled may still have a copy of an event on its way to a consumer.
 */
final class ConsumerLag {

    /** The topics each service's consumer reads, as its application.properties names them. */
    static final Map<String, List<String>> CONSUMED = Map.of(
            "order-service", List.of(Topics.INVENTORY_EVENTS, Topics.PAYMENT_EVENTS, Topics.SHIPPING_EVENTS,
                    Topics.ORDER_REPLAY),
            "inventory-service", List.of(Topics.ORDER_EVENTS, Topics.INVENTORY_REPLAY),
            "payment-service", List.of(Topics.ORDER_EVENTS, Topics.INVENTORY_EVENTS, Topics.PAYMENT_REPLAY),
            "shipping-service", List.of(Topics.ORDER_EVENTS, Topics.PAYMENT_EVENTS, Topics.SHIPPING_REPLAY));
    private static final long TIMEOUT_SECONDS = 30;

    private ConsumerLag() {
    }

    /**
     * Each service's group (named as the service) and the records it has yet to commit; a partition it never committed
     * counts whole.
     */
    static Map<String, Long> behind() throws Exception {
        Map<String, Object> config = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestStack.kafkaBootstrap());
        try (Admin admin = Admin.create(config)) {
            Map<String, Long> behind = new TreeMap<>();
            for (Map.Entry<String, List<String>> group : CONSUMED.entrySet()) {
                Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
                admin.describeTopics(group.getValue()).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS).values()
                        .forEach(topic -> topic.partitions().forEach(p -> latest.put(
                                new TopicPartition(topic.name(), p.partition()), OffsetSpec.latest())));
                Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(latest).all()
                        .get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group.getKey())
                        .partitionsToOffsetAndMetadata().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                long records = 0;
                for (Map.Entry<TopicPartition, ListOffsetsResultInfo> end : ends.entrySet()) {
                    OffsetAndMetadata at = committed.get(end.getKey());
                    records += Math.max(0, end.getValue().offset() - (at == null ? 0 : at.offset()));
                }
                behind.put(group.getKey(), records);
            }
            return behind;
        }
    }

    static boolean caughtUp(Map<String, Long> behind) {
        return behind.values().stream().allMatch(records -> records == 0);
    }
}
