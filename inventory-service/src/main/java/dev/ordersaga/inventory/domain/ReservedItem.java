package dev.ordersaga.inventory.domain;

import dev.ordersaga.events.StockItem;
import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

/** A quantity of one SKU held by a reservation. */
@Embeddable
public class ReservedItem {

    @Column(name = "sku", nullable = false)
    private String sku;

    @Column(name = "quantity", nullable = false)
    private int quantity;

    protected ReservedItem() {
    }

    public ReservedItem(String sku, int quantity) {
        this.sku = sku;
        this.quantity = quantity;
    }

    public String sku() {
        return sku;
    }

    public int quantity() {
        return quantity;
    }

    StockItem toStockItem() {
        return new StockItem(sku, quantity);
    }
}
