package dev.ordersaga.sandbox;

import java.util.UUID;

/** Provider-style ids ("ch_3f9a..."): unique, and short enough to read in a log line. */
final class Ids {

    private Ids() {
    }

    static String random() {
        return UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    }
}
