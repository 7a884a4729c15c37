package dev.ordersaga.events;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The contract test: every event type has a golden JSON file under contracts/ that this build must keep reading.
 * A change that breaks one of them is a breaking change of the wire format and needs a new event type instead.
 */
class EventContractTest {

    @TestFactory
    Stream<DynamicTest> everyGoldenFileDecodesToItsType() {
        return EventTypes.all().entrySet().stream().map(entry -> DynamicTest.dynamicTest(entry.getKey(), () -> {
            EventEnvelope<SagaEvent> envelope = EventCodec.decode(golden(entry.getKey() + ".json"));
            assertThat(envelope.type()).isEqualTo(entry.getKey());
            assertThat(envelope.payload()).isInstanceOf(entry.getValue());
            assertThat(envelope.orderId()).isEqualTo(UUID.fromString("6f1c2a4e-8b3d-4e5f-9a1b-2c3d4e5f6a7b"));
            assertThat(envelope.correlationId()).isEqualTo("corr-7d9e");
            // refundFollows and confirmedBy came after the golden files: they show how an event written before reads
            assertThat(envelope.payload()).hasNoNullFieldsOrPropertiesExcept("line2", "providerRefundId", "shippingAddress.line2",
                    "refundFollows", "confirmedBy", "confirmation");
            assertThat(EventCodec.decode(EventCodec.encode(envelope))).isEqualTo(envelope);
        }));
    }

    @Test
    void orderCreatedGoldenFileKeepsEveryField() {
        EventEnvelope<SagaEvent> envelope = EventCodec.decode(golden("OrderCreated.json"));
        OrderCreated created = (OrderCreated) envelope.payload();
        assertThat(envelope.causationId()).isNull();
        assertThat(created.items()).containsExactly(
                new OrderLine("SKU-RED-MUG", 2, new BigDecimal("12.50")),
                new OrderLine("SKU-TEA-100G", 1, new BigDecimal("7.00")));
        assertThat(created.total()).isEqualByComparingTo("32.00");
        assertThat(created.shippingAddress().line1()).isEqualTo("12 St James Square");
        assertThat(created.paymentToken()).isEqualTo("tok_ok");
    }

    @Test
    void causationIdLinksAnEventToTheOneThatCausedIt() {
        EventEnvelope<SagaEvent> envelope = EventCodec.decode(golden("StockReserved.json"));
        assertThat(envelope.causationId()).isEqualTo(UUID.fromString("0a000000-0000-4000-8000-000000000001"));
        assertThat(((StockReserved) envelope.payload()).items()).containsExactly(
                new StockItem("SKU-RED-MUG", 2), new StockItem("SKU-TEA-100G", 1));
    }

    @Test
    void aPaymentSucceededWrittenBeforeRefundFollowsExistedIsAChargeThatStands() {
        PaymentSucceeded old = (PaymentSucceeded) EventCodec.decode(golden("PaymentSucceeded.json")).payload();
        assertThat(old.refundFollows()).isNull();
        assertThat(old.refundedAtOnce()).isFalse();

        EventEnvelope<PaymentSucceeded> refunded = EventEnvelope.of(UUID.randomUUID(), "corr-late", null,
                new PaymentSucceeded("pay-1", new BigDecimal("32.00"), "EUR", "ch_late", true));
        String json = EventCodec.encode(refunded);
        assertThat(json).contains("\"refundFollows\":true").doesNotContain("refundedAtOnce");
        assertThat(((PaymentSucceeded) EventCodec.decode(json).payload()).refundedAtOnce()).isTrue();
    }

    @Test
    void aConsumerToleratesFieldsItDoesNotKnow() {
        EventEnvelope<SagaEvent> envelope = EventCodec.decode(golden("tolerant/OrderCreatedWithUnknownField.json"));
        assertThat(envelope.version()).isEqualTo(2);
        assertThat(((OrderCreated) envelope.payload()).customerId()).isEqualTo("cust-42");
    }

    @Test
    void unknownTypeIsReportedAsSuch() {
        String json = golden("OrderCreated.json").replace("\"type\": \"OrderCreated\"", "\"type\": \"OrderTeleported\"");
        assertThatThrownBy(() -> EventCodec.decode(json))
                .isInstanceOfSatisfying(UnknownEventTypeException.class, e -> assertThat(e.type()).isEqualTo("OrderTeleported"));
    }

    @Test
    void malformedMessagesAreRejectedWithTheReason() {
        assertThatThrownBy(() -> EventCodec.decode("{not json")).isInstanceOf(MalformedEventException.class);
        assertThatThrownBy(() -> EventCodec.decode("[1,2]")).isInstanceOf(MalformedEventException.class);
        String noOrder = golden("OrderConfirmed.json").replace("\"orderId\": \"6f1c2a4e-8b3d-4e5f-9a1b-2c3d4e5f6a7b\",", "");
        assertThatThrownBy(() -> EventCodec.decode(noOrder))
                .isInstanceOf(MalformedEventException.class).hasMessageContaining("orderId");
        String badPayload = golden("ShipmentOnHold.json").replace("\"attempts\": 5", "\"attempts\": \"many\"");
        assertThatThrownBy(() -> EventCodec.decode(badPayload))
                .isInstanceOf(MalformedEventException.class).hasMessageContaining("ShipmentOnHold");
        // every service keeps the correlation id with each step, in a column of 128
        String blankCorrelation = golden("OrderConfirmed.json").replace("\"corr-7d9e\"", "\" \"");
        String longCorrelation = golden("OrderConfirmed.json").replace("\"corr-7d9e\"", "\"" + "c".repeat(129) + "\"");
        for (String json : List.of(blankCorrelation, longCorrelation)) {
            assertThatThrownBy(() -> EventCodec.decode(json))
                    .isInstanceOf(MalformedEventException.class).hasMessageContaining("correlationId");
        }
        String longest = golden("OrderConfirmed.json").replace("\"corr-7d9e\"", "\"" + "c".repeat(128) + "\"");
        assertThat(EventCodec.decode(longest).correlationId()).hasSize(128);
    }

    @Test
    void aReasonIsShortenedToWhatItsColumnKeepsAndNeverSplitsACharacter() {
        assertThat(Reasons.fit(null, 10)).isNull();
        assertThat(Reasons.fit("card declined", 13)).isEqualTo("card declined");
        assertThat(Reasons.fit("card declined", 10)).isEqualTo("card decl…").hasSize(10);
        String emoji = "ab\uD83D\uDE00cd"; // a surrogate pair at 2-3
        assertThat(Reasons.fit(emoji, 4)).isEqualTo("ab…");
    }

    @Test
    void aReasonKeepsANulAsTheReplacementCharacterWhichTheDatabaseTakes() {
        assertThat(Reasons.fit("do not\u0000honour", 20)).isEqualTo("do not\uFFFDhonour");
        assertThat(Reasons.fit("\u0000\u0000declined", 5)).isEqualTo("\uFFFD\uFFFDde…");
    }

    @Test
    void everyEventHasATopicOfItsProducer() {
        assertThat(Topics.of(new OrderCancelled("x"))).isEqualTo(Topics.ORDER_EVENTS);
        assertThat(Topics.of(new StockReleased("r", List.of()))).isEqualTo(Topics.INVENTORY_EVENTS);
        assertThat(Topics.of(new PaymentFailed("p", "x"))).isEqualTo(Topics.PAYMENT_EVENTS);
        assertThat(Topics.of(new ShipmentCancelled("s"))).isEqualTo(Topics.SHIPPING_EVENTS);
        EventTypes.all().values().forEach(type ->
                assertThat(type.getInterfaces()).as(type.getSimpleName()).hasSize(1)
                        .allSatisfy(group -> assertThat(group.isSealed()).isTrue()));
    }

    static String golden(String name) {
        try (InputStream in = EventContractTest.class.getResourceAsStream("/contracts/" + name)) {
            assertThat(in).as("golden file contracts/" + name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
