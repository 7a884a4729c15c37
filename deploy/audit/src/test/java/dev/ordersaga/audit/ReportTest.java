package dev.ordersaga.audit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ordersaga.audit.Snapshot.TopicEvent;
import dev.ordersaga.audit.Snapshot.UnmatchedEntry;
import dev.ordersaga.events.Ids;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class ReportTest {

    @Test
    void aCleanAuditSaysSo() {
        World world = new World().everyKind();
        String text = Report.text(world.audit());
        assertThat(text).contains("order-saga audit: a test world")
                .contains("orders in scope: 6 (PAID 1, CONFIRMED 1, CANCELLED 4); waiting for an operator: 1")
                .contains("stock: 6 SKU(s) checked")
                .contains("ledgers: 9 ledger entries of orders in scope, 0 of orders outside the scope, 0 naming no order in order_db")
                .contains("duplicates on topics (info, at-least-once): none")
                .contains("violations: 0")
                .endsWith("OK: no violation\n");
    }

    @Test
    void everyViolationIsALineWithItsOrderIdKindAndDetailAndDuplicatesAreCounted() throws Exception {
        World world = new World();
        UUID confirmed = world.confirmed();
        UUID waiting = world.waitingForOperator();
        world.replaceOrder(waiting, o -> o.withWaitingReason(null));
        world.carrierShipments.clear();
        TopicEvent created = world.eventOf(confirmed, "OrderCreated");
        world.events.add(new TopicEvent(created.topic(), 0, 500, confirmed, created.eventId(), created.type()));
        AuditResult result = world.audit();

        String text = Report.text(result);
        assertThat(text)
                .contains("duplicates on topics (info, at-least-once): 1 event(s) delivered more than once, 1 extra copy (order.events 1)")
                .contains("violations: 2 (NOT_SETTLED 1, LIVE_SHIPMENTS 1)")
                .contains("VIOLATION order " + waiting + " NOT_SETTLED: status PAID")
                .contains("VIOLATION order " + confirmed + " LIVE_SHIPMENTS: CONFIRMED with 0 live shipment(s)")
                .endsWith("FAILED: 2 violation(s)\n");

        JsonNode json = new ObjectMapper().readTree(Report.json(result));
        assertThat(json.path("ok").asBoolean()).isFalse();
        assertThat(json.path("ordersInScope").asInt()).isEqualTo(2);
        assertThat(json.path("ordersByStatus").path("PAID").asInt()).isEqualTo(1);
        assertThat(json.path("violationsByKind").path("NOT_SETTLED").asInt()).isEqualTo(1);
        assertThat(json.path("violations")).extracting(v -> v.path("kind").asText() + " " + v.path("orderId").asText())
                .containsExactly("LIVE_SHIPMENTS " + confirmed, "NOT_SETTLED " + waiting);
        assertThat(json.path("topics").path("duplicatedEvents").asInt()).isEqualTo(1);
        assertThat(json.path("topics").path("duplicates").get(0).path("eventId").asText())
                .isEqualTo(created.eventId().toString());
        assertThat(json.path("topics").path("recordsRead").path("order.events").asLong()).isEqualTo(4);
    }

    @Test
    void anUndoingTakenOnAnOperatorsWordIsListedWithTheirWord() throws Exception {
        World world = new World();
        UUID order = world.undeliverable();
        world.refunds.clear();
        world.replacePayment(order, p -> p.confirmedByHand("alice", null));
        world.handConfirmed.add(new Snapshot.HandConfirmed(order, Snapshot.HandConfirmed.PAYMENT_REFUNDED, "alice",
                "bank transfer TR-1"));
        AuditResult result = world.audit();

        assertThat(Report.text(result))
                .contains("undone outside the providers' APIs, on an operator's word (info; check it against the "
                        + "settlement): 1\n  order " + order + " confirm-payment-refunded by alice: "
                        + "bank transfer TR-1\n")
                .endsWith("OK: no violation\n");
        JsonNode json = new ObjectMapper().readTree(Report.json(result));
        assertThat(json.path("onOperatorsWord").get(0).path("orderId").asText()).isEqualTo(order.toString());
        assertThat(json.path("onOperatorsWord").get(0).path("word").asText()).isEqualTo("bank transfer TR-1");
    }

    @Test
    void aLedgerEntryOfNoOrderIsALineWithTheEntryAndThoseNotJudgedAreCounted() throws Exception {
        World world = new World();
        world.confirmed();
        String ghost = Ids.timeOrdered(world.since.toEpochMilli()).toString();
        world.unmatched.add(new UnmatchedEntry("carrier shipment shp_9", ghost, null, "created", false));
        world.unmatched.add(new UnmatchedEntry("payment provider charge ch_0", "manual-test", null, "5.00 EUR, succeeded",
                false));
        AuditResult result = world.audit();

        assertThat(Report.text(result))
                .contains("ledgers: 2 ledger entries of orders in scope, 0 of orders outside the scope, 2 naming no order in order_db\n"
                        + "NOT CHECKED: 1 ledger entry naming no order: not an order id minted inside the window")
                .contains("violations: 1 (ORPHAN_LEDGER_ENTRY 1)")
                .contains("VIOLATION carrier shipment shp_9 ORPHAN_LEDGER_ENTRY: reference " + ghost + " (no order in order_db)");

        JsonNode json = new ObjectMapper().readTree(Report.json(result));
        assertThat(json.path("violations").get(0).path("ledgerEntry").asText()).isEqualTo("carrier shipment shp_9");
        assertThat(json.path("violations").get(0).path("orderId").isNull()).isTrue();
        assertThat(json.path("ledgers").path("entriesNamingNoOrder").asLong()).isEqualTo(2);
        assertThat(json.path("ledgers").path("notJudged").get(0).asText())
                .isEqualTo("payment provider charge ch_0 (5.00 EUR, succeeded), reference manual-test (no order in order_db)");
    }
}
