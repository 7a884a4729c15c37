package dev.ordersaga.sandbox;

/** The body of POST /v1/shipments. */
record ShipmentRequest(String reference, Address address) {

    static final String UNDELIVERABLE = "UNDELIVERABLE";
    /** A parcel handed to the courier at once: its cancel is refused (422), as a carrier's once it left the depot. */
    static final String UNCANCELLABLE = "UNCANCELLABLE";

    record Address(String name, String line1, String line2, String city, String postalCode, String country) {
    }

    ShipmentRequest validated() {
        Validation.required("reference", reference);
        if (address == null) {
            throw ApiException.badRequest("address is required");
        }
        Validation.required("address.line1", address.line1());
        return this;
    }

    boolean undeliverable() {
        return UNDELIVERABLE.equals(address.line1());
    }

    boolean cancellable() {
        return !UNCANCELLABLE.equals(address.line1());
    }
}
