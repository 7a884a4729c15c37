package dev.ordersaga.work;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProviderIdsTest {

    @Test
    void anIdIsKeptWhenItsColumnHoldsIt() {
        assertThat(ProviderIds.keepable("ch_3f9a", 128)).isTrue();
        assertThat(ProviderIds.keepable("x".repeat(128), 128)).isTrue();
        assertThat(ProviderIds.keepable("x".repeat(255), 255)).isTrue();
    }

    @Test
    void anIdItsColumnDoesNotHoldIsNoAnswerAndTheLogSaysWhyWithoutIt() {
        String tooLong = "shp_" + "9".repeat(128);
        assertThat(ProviderIds.keepable(tooLong, 128)).isFalse();
        assertThat(ProviderIds.whyNotKept(tooLong, 128)).isEqualTo("an id of 132 characters (at most 128 are kept)");
        assertThat(ProviderIds.keepable("ch_\u00001", 255)).isFalse();
        assertThat(ProviderIds.whyNotKept("ch_\u00001", 255)).isEqualTo("an id with a control character");
        assertThat(ProviderIds.keepable("ch_1\n", 255)).isFalse();
        assertThat(ProviderIds.keepable(" ", 255)).isFalse();
        assertThat(ProviderIds.keepable(null, 255)).isFalse();
        assertThat(ProviderIds.whyNotKept(null, 255)).isEqualTo("no id");
    }
}
