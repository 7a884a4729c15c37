package dev.ordersaga.inventory.domain;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StockTest {

    @Test
    void reserveReleaseAndConsumeMoveUnitsBetweenTheCounts() {
        Stock stock = stockOf(10);
        stock.reserve(4);
        assertThat(counts(stock)).isEqualTo("6/4/0");
        stock.release(1);
        assertThat(counts(stock)).isEqualTo("7/3/0");
        stock.consume(3);
        assertThat(counts(stock)).isEqualTo("7/0/3");
    }

    @Test
    void reservingMoreThanIsAvailableIsRefused() {
        Stock stock = stockOf(2);
        assertThat(stock.canReserve(3)).isFalse();
        assertThatThrownBy(() -> stock.reserve(3))
                .isInstanceOf(NegativeStockException.class)
                .hasMessage("cannot reserve 3 of SKU-A: available is 2");
        assertThat(counts(stock)).isEqualTo("2/0/0");
    }

    @Test
    void releasingOrConsumingMoreThanIsReservedIsRefused() {
        Stock stock = stockOf(5);
        stock.reserve(2);
        assertThatThrownBy(() -> stock.release(3)).isInstanceOf(NegativeStockException.class);
        assertThatThrownBy(() -> stock.consume(3)).isInstanceOf(NegativeStockException.class);
        assertThat(counts(stock)).isEqualTo("3/2/0");
    }

    @Test
    void availableIsNeverSetBelowZero() {
        Stock stock = stockOf(5);
        assertThatThrownBy(() -> stock.adjustAvailableTo(-1)).isInstanceOf(NegativeStockException.class);
        assertThat(counts(stock)).isEqualTo("5/0/0");
    }

    @Test
    void adjustingAvailableLeavesReservedAndShippedAlone() {
        Stock stock = stockOf(5);
        stock.reserve(2);
        stock.consume(1);
        stock.adjustAvailableTo(20);
        assertThat(counts(stock)).isEqualTo("20/1/1");
    }

    @Test
    void stockedCountsEveryUnitEverMadeAvailableAndStaysTheSumOfTheCounts() {
        Stock stock = stockOf(10);
        assertThat(stock.stocked()).isEqualTo(10);
        stock.reserve(4);
        stock.consume(1);
        stock.release(1);
        assertThat(counts(stock)).isEqualTo("7/2/1");
        assertThat(stock.stocked()).as("units only moved").isEqualTo(10);

        // counted again while units are reserved and shipped: only the free units change
        stock.adjustAvailableTo(20);
        assertThat(counts(stock)).isEqualTo("20/2/1");
        assertThat(stock.stocked()).isEqualTo(23);
        stock.adjustAvailableTo(0);
        assertThat(stock.stocked()).as("free units taken away").isEqualTo(3);
        stock.consume(2);
        assertThat(stock.stocked()).isEqualTo(stock.available() + stock.reserved() + stock.shipped()).isEqualTo(3);
    }

    /** A SKU that shipped 2^31 - 1 units in its life ships the next: its confirmation is not refused. */
    @Test
    void aSkuShipsPastWhatAnIntegerCounts() {
        Stock stock = Stock.stored("SKU-SCREW", 0, 1000, Integer.MAX_VALUE - 10, Integer.MAX_VALUE + 990L);
        stock.consume(1000);
        assertThat(counts(stock)).isEqualTo("0/0/" + (Integer.MAX_VALUE + 990L));
        stock.adjustAvailableTo(Integer.MAX_VALUE);
        assertThat(stock.stocked()).isEqualTo(stock.available() + stock.reserved() + stock.shipped())
                .isEqualTo(2L * Integer.MAX_VALUE + 990);
    }

    @Test
    void onlyPositiveQuantitiesMove() {
        Stock stock = stockOf(5);
        assertThat(stock.canReserve(0)).isFalse();
        assertThatThrownBy(() -> stock.reserve(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> stock.release(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(counts(stock)).isEqualTo("5/0/0");
    }

    private static Stock stockOf(int available) {
        Stock stock = new Stock("SKU-A");
        stock.adjustAvailableTo(available);
        return stock;
    }

    private static String counts(Stock stock) {
        return stock.available() + "/" + stock.reserved() + "/" + stock.shipped();
    }
}
