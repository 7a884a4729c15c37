package dev.ordersaga.sandbox;

import java.math.BigDecimal;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The payment sandbox's books. One lock for all of it: the idempotency rule (one charge per key, even under
 * concurrent calls) and the refund limit are check-then-act across several maps.
 */
final class PaymentLedger {

    private final Map<String, Charge> chargesByKey = new LinkedHashMap<>();
    private final Map<String, String> keysByChargeId = new HashMap<>();
    /**
     * Charges whose key was forgotten ({@link #forgetKey}), as real providers forget keys after a day or so: still in
     * the books, the report and the ledger, but a charge call under their key charges anew.
     */
    private final Map<String, Charge> forgottenById = new LinkedHashMap<>();
    private final Set<String> forgottenKeys = new HashSet<>();
    private final Map<String, Refund> refundsByKey = new LinkedHashMap<>();
    private final Map<String, Integer> failingRefundsLeft = new HashMap<>();
    /**
     * Calls per idempotency key, for the ledger view only: the books say a key was charged once whatever the service
     * did, and a test of the service needs to tell one call from a repeated one, or a status query from a re-POST.
     */
    private final Map<String, Integer> chargeCalls = new HashMap<>();
    private final Map<String, Integer> statusQueries = new HashMap<>();
    /**
     * While on, the provider forgets each charge's key as soon as it made the charge, as one whose key store was lost or
     * that keeps keys for less time than a client's retry takes: a status query under the key finds nothing, and a
     * charge call under it charges anew.
     */
    private boolean forgetful;
    /** Charge calls that charged anew under a key whose charge had been forgotten: how a fault run sees its effect. */
    private long chargedUnderForgottenKeys;
    /** Every charge that succeeded, in the order it did: a late settlement comes after the charges made before it. */
    private final Report<Charge> settlements = new Report<>();

    /** What a charge call found: {@code isNew} is false when the key had been charged before. */
    record Recorded(Charge charge, boolean isNew) {
    }

    synchronized Recorded charge(String idempotencyKey, ChargeRequest request) {
        chargeCalls.merge(idempotencyKey, 1, Integer::sum);
        Charge existing = chargesByKey.get(idempotencyKey);
        if (existing != null) {
            requireSameRequest(idempotencyKey, existing.madeFor(request));
            return new Recorded(existing, false);
        }
        Charge charge = Charge.decide(idempotencyKey, request);
        if (forgottenKeys.contains(idempotencyKey)) {
            chargedUnderForgottenKeys++;
        }
        if (forgetful) {
            forgottenById.put(charge.chargeId(), charge);
            forgottenKeys.add(idempotencyKey);
        } else {
            chargesByKey.put(idempotencyKey, charge);
        }
        if (charge.succeeded()) {
            settlements.add(charge);
        }
        keysByChargeId.put(charge.chargeId(), idempotencyKey);
        failingRefundsLeft.put(charge.chargeId(), CardToken.of(charge.token()).failingRefunds());
        return new Recorded(charge, true);
    }

    /** The status query: counted, whether or not the key was charged. */
    synchronized Optional<Charge> queryStatus(String idempotencyKey) {
        statusQueries.merge(idempotencyKey, 1, Integer::sum);
        return Optional.ofNullable(chargesByKey.get(idempotencyKey));
    }

    /**
     * Forgets the key's charge as far as idempotency goes: the next charge call under the key makes a second charge.
     *
     * @return the charge that was under the key
     */
    synchronized Charge forgetKey(String idempotencyKey) {
        Charge charge = chargesByKey.remove(idempotencyKey);
        if (charge == null) {
            throw ApiException.notFound("no charge with idempotency key " + idempotencyKey);
        }
        forgottenById.put(charge.chargeId(), charge);
        forgottenKeys.add(idempotencyKey);
        return charge;
    }

    /** Switches the forgetful mode on or off; returns how many charges were made anew under a forgotten key. */
    synchronized long forgetful(boolean on) {
        forgetful = on;
        return chargedUnderForgottenKeys;
    }

    synchronized Map<String, Object> forgetfulView() {
        return Json.object("forgetful", forgetful, "chargedUnderForgottenKeys", chargedUnderForgottenKeys);
    }

    /** A late settlement: the provider changes its mind about a declined charge. */
    synchronized Charge settleLate(String chargeId) {
        Charge charge = chargeById(chargeId);
        if (charge.succeeded()) {
            throw ApiException.conflict("charge " + chargeId + " is not declined");
        }
        Charge settled = charge.settledLate();
        if (forgottenById.containsKey(chargeId)) {
            forgottenById.put(chargeId, settled);
        } else {
            chargesByKey.put(settled.idempotencyKey(), settled);
        }
        settlements.add(settled);
        return settled;
    }

    /** A page of the settlement report, as the read asks for it ({@link Report#page}). */
    synchronized Map<String, Object> settlements(Request request) {
        return settlements.page(request, "settlements", (charge, settledAt) -> Json.object("chargeId", charge.chargeId(),
                "idempotencyKey", charge.idempotencyKey(), "reference", charge.reference(), "amount", charge.amount(),
                "currency", charge.currency(), "settledAt", settledAt.toString()));
    }

    synchronized Refund refund(String idempotencyKey, RefundRequest request) {
        Refund existing = refundsByKey.get(idempotencyKey);
        if (existing != null) {
            requireSameRequest(idempotencyKey, existing.madeFor(request));
            return existing;
        }
        Charge charge = chargeById(request.chargeId());
        if (!charge.currency().equals(request.currency())) {
            throw ApiException.badRequest("currency " + request.currency() + " differs from the charge's "
                    + charge.currency());
        }
        if (CardToken.of(charge.token()).refusesRefunds()) {
            throw ApiException.unprocessable("charge " + charge.chargeId() + " is disputed: it cannot be refunded");
        }
        int failing = failingRefundsLeft.get(charge.chargeId());
        if (failing > 0) {
            // Counted per charge, not per key: a retry with the same key is exactly what must fail again.
            failingRefundsLeft.put(charge.chargeId(), failing - 1);
            throw ApiException.unavailable("refunds are temporarily unavailable");
        }
        BigDecimal left = refundable(charge);
        if (request.amount().compareTo(left) > 0) {
            // refused as it stands, for good (422), as real providers do: a 409 is a request under the key still
            // under way, which a client asks again
            throw ApiException.unprocessable("amount " + request.amount() + " exceeds what is left to refund: " + left);
        }
        Refund refund = Refund.of(idempotencyKey, request);
        refundsByKey.put(idempotencyKey, refund);
        return refund;
    }

    /**
     * A key stands for one request, as at real providers: reused for another (an amount, a token, a charge that
     * differs) it is refused with 422 rather than answered with what the first request got, which would tell the
     * caller that the second was made.
     */
    private static void requireSameRequest(String idempotencyKey, boolean same) {
        if (!same) {
            throw ApiException.unprocessable("idempotency key " + idempotencyKey + " was used with another request");
        }
    }

    synchronized Map<String, Object> ledgerView() {
        return Json.object(
                "charges", Stream.concat(forgottenById.values().stream(), chargesByKey.values().stream())
                        .map(this::chargeView).toList(),
                "refunds", refundsByKey.values().stream().map(Refund::ledgerView).toList());
    }

    private Map<String, Object> chargeView(Charge charge) {
        Map<String, Object> view = charge.ledgerView();
        view.put("chargeCalls", chargeCalls.getOrDefault(charge.idempotencyKey(), 0));
        view.put("statusQueries", statusQueries.getOrDefault(charge.idempotencyKey(), 0));
        return view;
    }

    private Charge chargeById(String chargeId) {
        String key = keysByChargeId.get(chargeId);
        if (key == null) {
            throw ApiException.notFound("unknown charge " + chargeId);
        }
        Charge forgotten = forgottenById.get(chargeId);
        return forgotten != null ? forgotten : chargesByKey.get(key);
    }

    private BigDecimal refundable(Charge charge) {
        if (!charge.succeeded()) {
            return BigDecimal.ZERO;
        }
        BigDecimal refunded = refundsByKey.values().stream()
                .filter(refund -> refund.chargeId().equals(charge.chargeId()))
                .map(Refund::amount)
                .reduce(BigDecimal.ZERO, BigDecimal::add);
        return charge.amount().subtract(refunded);
    }
}
