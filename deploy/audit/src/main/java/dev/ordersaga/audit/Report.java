package dev.ordersaga.audit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/** The audit's result for people (a summary, then one line per violation) and for tools (JSON). */
public final class Report {

    private static final ObjectMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

    private Report() {
    }

    public static String text(AuditResult result) {
        StringBuilder out = new StringBuilder();
        out.append("order-saga audit: ").append(result.scope()).append('\n');
        out.append("orders in scope: ").append(result.ordersInScope());
        if (!result.ordersByStatus().isEmpty()) {
            out.append(" (").append(result.ordersByStatus().entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "))).append(')');
        }
        out.append("; waiting for an operator: ").append(result.waiting()).append('\n');

        out.append("stock: ").append(result.skusChecked()).append(" SKU(s) checked");
        if (result.skusWithoutStockRow() > 0) {
            out.append(", ").append(result.skusWithoutStockRow()).append(" named by orders without a stock row");
        }
        out.append('\n');
        if (result.skusWithoutStocked() > 0) {
            out.append("NOT CHECKED: stock conservation of ").append(result.skusWithoutStocked())
                    .append(" SKU(s): inventory_db has no stock.stocked column (migration V3 not applied)\n");
        }

        AuditResult.LedgerStats ledgers = result.ledgers();
        out.append("ledgers: ").append(entries(ledgers.ofOrdersInScope())).append(" of orders in scope, ")
                .append(ledgers.ofOtherOrders()).append(" of orders outside the scope, ")
                .append(ledgers.ofNoOrder()).append(" naming no order in order_db\n");
        if (!ledgers.notJudged().isEmpty()) {
            out.append("NOT CHECKED: ").append(entries(ledgers.notJudged().size())).append(" naming no order: ")
                    .append(ledgers.notJudgedBecause()).append('\n');
        }

        long read = result.recordsRead().values().stream().mapToLong(Long::longValue).sum();
        out.append("topics: ").append(read).append(" record(s) read");
        if (!result.recordsRead().isEmpty()) {
            out.append(" (").append(result.recordsRead().entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "))).append(')');
        }
        out.append(", ").append(result.eventsInScope()).append(" of orders in scope");
        if (result.undecodable() > 0) {
            out.append(", ").append(result.undecodable()).append(" of them without an event id");
        }
        out.append('\n');

        out.append("duplicates on topics (info, at-least-once): ");
        if (result.duplicates().isEmpty()) {
            out.append("none\n");
        } else {
            Map<String, Integer> perTopic = new TreeMap<>();
            result.duplicates().forEach(d -> perTopic.merge(d.topic(), 1, Integer::sum));
            out.append(result.duplicates().size()).append(" event(s) delivered more than once, ")
                    .append(result.extraCopies()).append(" extra cop").append(result.extraCopies() == 1 ? "y" : "ies")
                    .append(" (").append(perTopic.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                            .collect(Collectors.joining(", "))).append(")\n");
        }

        if (!result.surplusesUndone().isEmpty()) {
            out.append("second effects a provider made under our keys, undone by the services (info): ")
                    .append(result.surplusesUndone().size()).append(" (").append(result.surplusesUndone().stream()
                            .map(u -> u.kind() + " " + u.providerRef() + " of order " + u.orderId())
                            .collect(Collectors.joining(", "))).append(")\n");
        }

        if (!result.onOperatorsWord().isEmpty()) {
            out.append("undone outside the providers' APIs, on an operator's word (info; check it against the "
                    + "settlement): ").append(result.onOperatorsWord().size()).append('\n');
            for (Snapshot.HandConfirmed h : result.onOperatorsWord()) {
                out.append("  order ").append(h.orderId()).append(' ').append(h.action()).append(" by ")
                        .append(h.operator()).append(": ").append(h.word()).append('\n');
            }
        }

        out.append("violations: ").append(result.violations().size());
        if (!result.violations().isEmpty()) {
            out.append(" (").append(result.violationsByKind().entrySet().stream()
                    .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "))).append(')');
        }
        out.append('\n');
        for (Violation v : result.violations()) {
            out.append("VIOLATION ").append(v.subject()).append(' ').append(v.kind()).append(": ")
                    .append(v.detail()).append('\n');
        }
        out.append(result.clean() ? "OK: no violation\n" : "FAILED: " + result.violations().size() + " violation(s)\n");
        return out.toString();
    }

    private static String entries(long count) {
        return count + (count == 1 ? " ledger entry" : " ledger entries");
    }

    public static String json(AuditResult result) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("scope", result.scope());
        root.put("ok", result.clean());
        root.put("ordersInScope", result.ordersInScope());
        root.put("ordersByStatus", result.ordersByStatus());
        root.put("waitingForOperator", result.waiting());
        Map<String, Object> stock = new LinkedHashMap<>();
        stock.put("skusChecked", result.skusChecked());
        stock.put("skusWithoutStockedColumn", result.skusWithoutStocked());
        stock.put("skusWithoutStockRow", result.skusWithoutStockRow());
        root.put("stock", stock);
        Map<String, Object> ledgers = new LinkedHashMap<>();
        ledgers.put("entriesOfOrdersInScope", result.ledgers().ofOrdersInScope());
        ledgers.put("entriesOfOrdersOutsideScope", result.ledgers().ofOtherOrders());
        ledgers.put("entriesNamingNoOrder", result.ledgers().ofNoOrder());
        ledgers.put("notJudged", result.ledgers().notJudged());
        ledgers.put("notJudgedBecause", result.ledgers().notJudgedBecause());
        root.put("ledgers", ledgers);
        Map<String, Object> topics = new LinkedHashMap<>();
        topics.put("recordsRead", result.recordsRead());
        topics.put("eventsOfOrdersInScope", result.eventsInScope());
        topics.put("withoutEventId", result.undecodable());
        topics.put("duplicatedEvents", result.duplicates().size());
        topics.put("extraCopies", result.extraCopies());
        topics.put("duplicates", result.duplicates());
        root.put("topics", topics);
        List<Map<String, Object>> surpluses = new ArrayList<>();
        for (Snapshot.Surplus u : result.surplusesUndone()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("orderId", u.orderId().toString());
            one.put("kind", u.kind());
            one.put("providerRef", u.providerRef());
            surpluses.add(one);
        }
        root.put("surplusesUndone", surpluses);
        List<Map<String, Object>> onWord = new ArrayList<>();
        for (Snapshot.HandConfirmed h : result.onOperatorsWord()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("orderId", h.orderId().toString());
            one.put("action", h.action());
            one.put("operator", h.operator());
            one.put("word", h.word());
            onWord.add(one);
        }
        root.put("onOperatorsWord", onWord);
        Map<String, Integer> byKind = new LinkedHashMap<>();
        result.violationsByKind().forEach((kind, count) -> byKind.put(kind.name(), count));
        root.put("violationsByKind", byKind);
        List<Map<String, Object>> violations = new ArrayList<>();
        for (Violation v : result.violations()) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("kind", v.kind().name());
            one.put("orderId", v.orderId() == null ? null : v.orderId().toString());
            one.put("sku", v.sku());
            one.put("ledgerEntry", v.ledgerEntry());
            one.put("detail", v.detail());
            violations.add(one);
        }
        root.put("violations", violations);
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write the report as JSON", e);
        }
    }
}
