package dev.ordersaga.events;

/**
 * Free text that a service keeps in a bounded column: a provider's or carrier's reason, the list of SKUs a
 * reservation lacked, an operator's words. Kept whole, a long one would make the database refuse the step's
 * transaction on every attempt; shortened, the step goes on and the text still says what happened. The same holds for
 * a NUL character, which PostgreSQL takes in no text or jsonb value: it is kept as U+FFFD.
 */
public final class Reasons {

    private static final String ELLIPSIS = "…";

    private Reasons() {
    }

    /**
     * {@code text} as it is if it fits in {@code max} characters, else its beginning and an ellipsis; a NUL in it as
     * U+FFFD.
     */
    public static String fit(String text, int max) {
        if (text == null) {
            return null;
        }
        text = text.replace('\u0000', '\uFFFD');
        if (text.length() <= max) {
            return text;
        }
        int end = max - ELLIPSIS.length();
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a character
        }
        return text.substring(0, end) + ELLIPSIS;
    }
}
