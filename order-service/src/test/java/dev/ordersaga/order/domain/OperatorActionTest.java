package dev.ordersaga.order.domain;

import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class OperatorActionTest {

    /** The detail is free text (an operator's reason, or one made from the operator's name): kept to its column. */
    @Test
    void aDetailLongerThanItsColumnIsShortenedWithAnEllipsis() {
        OperatorAction action = new OperatorAction(UUID.randomUUID(), "cancel", "heidi", "d".repeat(600));

        assertThat(action.detail()).hasSize(OperatorAction.MAX_DETAIL_LENGTH).startsWith("ddd").endsWith("…");
        assertThat(new OperatorAction(UUID.randomUUID(), "cancel", "heidi", "short").detail()).isEqualTo("short");
    }
}
