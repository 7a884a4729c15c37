package dev.ordersaga.sandbox;

import java.util.Arrays;

/** The behaviour the payment sandbox gives each payment token: the table the services' tests are written against. */
enum CardToken {

    OK("tok_ok", true, false, 0),
    DECLINED("tok_declined", false, false, 0),
    /** The charge is decided at once, but the answer comes only after the caller's timeout. */
    TIMEOUT_SUCCEEDS("tok_timeout_succeeds", true, true, 0),
    TIMEOUT_DECLINED("tok_timeout_declined", false, true, 0),
    /** A good charge whose first two refund calls fail: a compensation that must be retried. */
    REFUND_FAILS_TWICE("tok_refund_fails_twice", true, false, 2),
    /**
     * A good charge the provider refuses every refund of (as for a disputed charge): a compensation its API never
     * completes, which an operator settles by hand.
     */
    REFUND_REFUSED("tok_refund_refused", true, false, Integer.MAX_VALUE),
    UNKNOWN(null, false, false, 0);

    private final String token;
    private final boolean succeeds;
    private final boolean answersLate;
    private final int failingRefunds;

    CardToken(String token, boolean succeeds, boolean answersLate, int failingRefunds) {
        this.token = token;
        this.succeeds = succeeds;
        this.answersLate = answersLate;
        this.failingRefunds = failingRefunds;
    }

    static CardToken of(String token) {
        return Arrays.stream(values()).filter(t -> t.token != null && t.token.equals(token)).findFirst().orElse(UNKNOWN);
    }

    boolean succeeds() {
        return succeeds;
    }

    boolean answersLate() {
        return answersLate;
    }

    int failingRefunds() {
        return failingRefunds;
    }

    boolean refusesRefunds() {
        return failingRefunds == Integer.MAX_VALUE;
    }

    String declineReason() {
        return this == UNKNOWN ? "unknown token" : "card declined";
    }
}
