package dev.ordersaga.shipping.domain;

import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;

import java.util.Objects;

/** Where the parcel goes, as the order gave it. */
@Embeddable
public class Address {

    @Column(name = "ship_name")
    private String name;
    @Column(name = "ship_line1")
    private String line1;
    @Column(name = "ship_line2")
    private String line2;
    @Column(name = "ship_city")
    private String city;
    @Column(name = "ship_postal_code")
    private String postalCode;
    @Column(name = "ship_country")
    private String country;

    protected Address() {
    }

    public Address(String name, String line1, String line2, String city, String postalCode, String country) {
        this.name = name;
        this.line1 = Objects.requireNonNull(line1, "line1");
        this.line2 = line2;
        this.city = city;
        this.postalCode = postalCode;
        this.country = country;
    }

    public String name() {
        return name;
    }

    public String line1() {
        return line1;
    }

    public String line2() {
        return line2;
    }

    public String city() {
        return city;
    }

    public String postalCode() {
        return postalCode;
    }

    public String country() {
        return country;
    }

    // a value: a shipment's progress compares the address it had when read with the one it has now
    @Override
    public boolean equals(Object other) {
        return other instanceof Address that && Objects.equals(name, that.name) && Objects.equals(line1, that.line1)
                && Objects.equals(line2, that.line2) && Objects.equals(city, that.city)
                && Objects.equals(postalCode, that.postalCode) && Objects.equals(country, that.country);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, line1, line2, city, postalCode, country);
    }
}
