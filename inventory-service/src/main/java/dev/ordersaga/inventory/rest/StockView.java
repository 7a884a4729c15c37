package dev.ordersaga.inventory.rest;

import dev.ordersaga.inventory.domain.Stock;

public record StockView(String sku, int available, int reserved, int shipped) {

    static StockView of(Stock stock) {
        return new StockView(stock.sku(), stock.available(), stock.reserved(), stock.shipped());
    }
}
