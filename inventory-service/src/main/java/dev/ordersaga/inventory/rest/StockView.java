package dev.ordersaga.inventory.rest;

import dev.ordersaga.inventory.domain.Stock;

public record StockView(String sku, long available, long reserved, long shipped) {

    static StockView of(Stock stock) {
        return new StockView(stock.sku(), stock.available(), stock.reserved(), stock.shipped());
    }
}
