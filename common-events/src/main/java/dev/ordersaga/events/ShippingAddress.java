package dev.ordersaga.events;

public record ShippingAddress(String name, String line1, String line2, String city, String postalCode, String country) {
}
