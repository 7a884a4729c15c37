package dev.ordersaga.audit;

import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the checks found: the violations, and what was looked at (for the summary).
 *
 * @param ordersByStatus            orders in scope per status, in the order of the saga
 * @param waiting                   orders that wait for an operator (any status but CONFIRMED/CANCELLED, with a reason)
 * @param skusChecked               SKUs touched by orders in scope that have a stock row
 * @param skusWithoutStocked        of those, SKUs whose conservation could not be checked (no stocked column)
 * @param skusWithoutStockRow       SKUs named by orders in scope that have no stock row (nothing to conserve)
 * @param ledgers                   what the providers' ledgers hold, by what their references name
 * @param recordsRead               records read per topic, in scope or not
 * @param eventsInScope             records of orders in scope on the topics, duplicates included
 * @param undecodable               records of orders in scope without an event id
 * @param duplicates                events of orders in scope that are on their topic more than once (at-least-once:
 *                                  information, not a violation)
 * @param surplusesUndone           second charges and parcels a provider made under our keys that the services undid,
 *                                  their undoing in the provider's books (information, not a violation)
 * @param onOperatorsWord           undoings of CANCELLED orders the ledgers do not show, taken on the word of the
 *                                  operator who confirmed them settled outside the provider's API (information: a
 *                                  person checks them against the settlement the word names)
 */
public record AuditResult(String scope, int ordersInScope, Map<String, Integer> ordersByStatus, int waiting,
                          int skusChecked, int skusWithoutStocked, int skusWithoutStockRow, LedgerStats ledgers,
                          Map<String, Long> recordsRead, long eventsInScope, long undecodable,
                          List<DuplicateEvent> duplicates, List<Snapshot.Surplus> surplusesUndone,
                          List<Snapshot.HandConfirmed> onOperatorsWord, List<Violation> violations) {

    public AuditResult {
        ordersByStatus = Collections.unmodifiableMap(new LinkedHashMap<>(ordersByStatus));
        recordsRead = Collections.unmodifiableMap(new LinkedHashMap<>(recordsRead));
        duplicates = List.copyOf(duplicates);
        surplusesUndone = List.copyOf(surplusesUndone);
        onOperatorsWord = List.copyOf(onOperatorsWord);
        violations = List.copyOf(violations);
    }

    /**
     * The providers' charges, refunds and carrier shipments.
     *
     * @param ofOrdersInScope  entries whose reference is an order in scope
     * @param ofOtherOrders    entries naming an order order_db has outside the scope
     * @param ofNoOrder        entries naming no order order_db has
     * @param notJudged        those of no order that the scope does not reach, each with its reference: no violation
     * @param notJudgedBecause why they are not judged; null when there are none
     */
    public record LedgerStats(long ofOrdersInScope, long ofOtherOrders, long ofNoOrder, List<String> notJudged,
                              String notJudgedBecause) {

        public LedgerStats {
            notJudged = List.copyOf(notJudged);
        }
    }

    /** An event id seen {@code copies} times on its topic. */
    public record DuplicateEvent(String topic, UUID eventId, UUID orderId, String type, int copies) {
    }

    public boolean clean() {
        return violations.isEmpty();
    }

    public Map<Violation.Kind, Integer> violationsByKind() {
        Map<Violation.Kind, Integer> byKind = new EnumMap<>(Violation.Kind.class);
        violations.forEach(v -> byKind.merge(v.kind(), 1, Integer::sum));
        return byKind;
    }

    /** The copies beyond the first, over all duplicated events. */
    public long extraCopies() {
        return duplicates.stream().mapToLong(d -> d.copies() - 1L).sum();
    }
}
