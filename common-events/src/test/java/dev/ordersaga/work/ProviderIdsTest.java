package dev.ordersaga.work;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProviderIdsTest {

    @Test
    void anIdIsKeptWhenAColumnHoldsIt() {
        assertThat(ProviderIds.keepable("ch_3f9a")).isTrue();
        assertThat(ProviderIds.keepable("x".repeat(ProviderIds.MAX_LENGTH))).isTrue();
    }

    @Test
    void anIdNoColumnHoldsIsNoAnswerAndTheLogSaysWhyWithoutIt() {
        String tooLong = "shp_" + "9".repeat(ProviderIds.MAX_LENGTH);
        assertThat(ProviderIds.keepable(tooLong)).isFalse();
        assertThat(ProviderIds.whyNotKept(tooLong)).isEqualTo("an id of 132 characters (at most 128 are kept)");
        assertThat(ProviderIds.keepable("ch_\u00001")).isFalse();
        assertThat(ProviderIds.whyNotKept("ch_\u00001")).isEqualTo("an id with a control character");
        assertThat(ProviderIds.keepable("ch_1\n")).isFalse();
        assertThat(ProviderIds.keepable(" ")).isFalse();
        assertThat(ProviderIds.keepable(null)).isFalse();
        assertThat(ProviderIds.whyNotKept(null)).isEqualTo("no id");
    }
}
