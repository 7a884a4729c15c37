package dev.ordersaga.work;

/**
 * The ids a provider or carrier gives for what it did (a charge, a refund, a parcel). They are kept as they came,
 * since later calls name them, so an id no column of ours holds is no answer: recorded, it would fail its transaction
 * on every attempt, and the call would be made again, and fail to record again, for ever. Each service checks against
 * its own columns' width; a control character is refused too (PostgreSQL takes no NUL in text, and no real provider's
 * id has one).
 */
public final class ProviderIds {

    private ProviderIds() {
    }

    /** Whether {@code id} can be recorded in a column of {@code width}: not blank, no control character. */
    public static boolean keepable(String id, int width) {
        return id != null && !id.isBlank() && id.length() <= width && id.chars().noneMatch(Character::isISOControl);
    }

    /** What a log line says of an id that is not {@link #keepable}, without the id, which may be anything. */
    public static String whyNotKept(String id, int width) {
        if (id == null || id.isBlank()) {
            return "no id";
        }
        return id.length() > width ? "an id of " + id.length() + " characters (at most " + width + " are kept)"
                : "an id with a control character";
    }
}
