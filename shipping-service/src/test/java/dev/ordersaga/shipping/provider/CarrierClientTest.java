package dev.ordersaga.shipping.provider;

import dev.ordersaga.sandbox.CarrierSandbox;
import dev.ordersaga.shipping.provider.CarrierClient.Cancelled;
import dev.ordersaga.shipping.provider.CarrierClient.Created;
import dev.ordersaga.shipping.provider.CarrierClient.Destination;
import dev.ordersaga.shipping.provider.CarrierClient.Found;
import dev.ordersaga.shipping.provider.CarrierClient.NotFound;
import dev.ordersaga.shipping.provider.CarrierClient.Rejected;
import dev.ordersaga.shipping.provider.CarrierClient.Unavailable;
import dev.ordersaga.shipping.provider.CarrierClient.UnknownShipment;
import dev.ordersaga.shipping.testing.CarrierSandboxApi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The client against the carrier sandbox: every answer the carrier can give, classified. */
class CarrierClientTest {

    private static final Destination ADA = new Destination("Ada Lovelace", "12 St James Square", null, "London",
            "SW1Y 4JH", "GB");
    private static final Duration TIMEOUT = Duration.ofMillis(500);

    private CarrierSandbox sandbox;
    private CarrierSandboxApi controls;
    private CarrierClient client;

    @BeforeEach
    void startCarrier() {
        sandbox = CarrierSandbox.start(0);
        controls = new CarrierSandboxApi(sandbox.baseUrl());
        client = new CarrierClient(sandbox.baseUrl() + "/", TIMEOUT);
    }

    @AfterEach
    void stopCarrier() {
        sandbox.close();
    }

    @Test
    void createIsIdempotentByKey() {
        UUID orderId = UUID.randomUUID();
        String key = UUID.randomUUID().toString();

        var first = client.create(key, orderId.toString(), ADA);
        var second = client.create(key, orderId.toString(), ADA);

        assertThat(first).isInstanceOf(Created.class);
        assertThat(second).isEqualTo(first);
        assertThat(controls.shipmentsOf(orderId)).singleElement()
                .satisfies(s -> {
                    assertThat(s.shipmentId()).isEqualTo(((Created) first).carrierShipmentId());
                    assertThat(s.idempotencyKey()).isEqualTo(key);
                    assertThat(s.status()).isEqualTo("created");
                });
    }

    @Test
    void undeliverableAddressIsRejected() {
        var result = client.create(UUID.randomUUID().toString(), UUID.randomUUID().toString(),
                new Destination("Nobody", "UNDELIVERABLE", null, "Nowhere", "0000", "XX"));
        assertThat(result).isEqualTo(new Rejected("address undeliverable"));
    }

    @Test
    void outageIsUnavailableAndCertainlyCreatedNothing() {
        UUID orderId = UUID.randomUUID();
        controls.outage(1);
        var result = client.create(UUID.randomUUID().toString(), orderId.toString(), ADA);
        assertThat(result).isInstanceOfSatisfying(Unavailable.class, u -> {
            assertThat(u.uncertain()).isFalse();
            assertThat(u.reason()).contains("503");
        });
        assertThat(controls.shipmentsOf(orderId)).isEmpty();
    }

    @Test
    void timeoutIsUnavailableButUncertainAndTheLookupFindsWhatItCreated() {
        UUID orderId = UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        controls.slow(TIMEOUT.toMillis() + 700);
        var result = client.create(key, orderId.toString(), ADA);
        controls.slow(0);

        assertThat(result).isInstanceOfSatisfying(Unavailable.class, u -> {
            assertThat(u.uncertain()).isTrue();
            assertThat(u.reason()).contains("500 ms");
        });
        assertThat(client.find(key)).isInstanceOfSatisfying(Found.class,
                f -> assertThat(f.carrierShipmentId()).isEqualTo(controls.shipmentsOf(orderId).get(0).shipmentId()));
    }

    @Test
    void lookupOfAnUnknownKeyFindsNothing() {
        assertThat(client.find(UUID.randomUUID().toString())).isInstanceOf(NotFound.class);
    }

    @Test
    void cancelIsIdempotentAndAnUnknownShipmentIsSaidSo() {
        UUID orderId = UUID.randomUUID();
        String key = UUID.randomUUID().toString();
        String carrierId = ((Created) client.create(key, orderId.toString(), ADA)).carrierShipmentId();

        assertThat(client.cancel(carrierId)).isInstanceOf(Cancelled.class);
        assertThat(client.cancel(carrierId)).isInstanceOf(Cancelled.class);
        assertThat(controls.shipmentsOf(orderId)).singleElement().satisfies(s -> assertThat(s.status()).isEqualTo("cancelled"));
        assertThat(client.cancel("shp_unknown")).isInstanceOf(UnknownShipment.class);
    }

    @Test
    void aCancelOfAParcelHandedToTheCourierIsRefused() {
        UUID orderId = UUID.randomUUID();
        String carrierId = ((Created) client.create(UUID.randomUUID().toString(), orderId.toString(),
                new Destination("Ada", "UNCANCELLABLE", null, "London", "N1 9GU", "GB"))).carrierShipmentId();

        assertThat(client.cancel(carrierId)).isInstanceOfSatisfying(CarrierClient.CancelFailed.class, failed -> {
            assertThat(failed.reason()).contains("422").contains("too late to cancel");
            assertThat(failed.refused()).isTrue();
        });
        assertThat(controls.shipmentsOf(orderId)).singleElement()
                .satisfies(s -> assertThat(s.status()).isEqualTo("created"));
    }

    /** The carrier answers a key it has seen with what the key did first: not a cancellation of this shipment. */
    @Test
    void aCancelAnsweredForAnotherShipmentFails() {
        UUID orderId = UUID.randomUUID();
        String first = ((Created) client.create(UUID.randomUUID().toString(), orderId.toString(), ADA)).carrierShipmentId();
        String second = ((Created) client.create(UUID.randomUUID().toString(), orderId.toString(), ADA)).carrierShipmentId();
        String cancelKey = "cancel-" + UUID.randomUUID();
        assertThat(client.cancel(first, cancelKey)).isInstanceOf(Cancelled.class);

        assertThat(client.cancel(second, cancelKey)).isInstanceOfSatisfying(CarrierClient.CancelFailed.class,
                failed -> {
                    assertThat(failed.reason()).contains(first).contains(cancelKey);
                    assertThat(failed.refused()).as("the key will never cancel this one").isTrue();
                });
        assertThat(controls.shipmentsOf(orderId)).filteredOn(s -> s.shipmentId().equals(second)).singleElement()
                .satisfies(s -> assertThat(s.status()).isEqualTo("created"));
    }

    @Test
    void cancelThatTimesOutFails() {
        String carrierId = ((Created) client.create(UUID.randomUUID().toString(), UUID.randomUUID().toString(), ADA))
                .carrierShipmentId();
        controls.slow(TIMEOUT.toMillis() + 700);
        var result = client.cancel(carrierId);
        controls.slow(0);
        assertThat(result).isInstanceOfSatisfying(CarrierClient.CancelFailed.class,
                failed -> assertThat(failed.refused()).as("unanswered: it may yet cancel").isFalse());
    }

    /** A 4xx is the carrier refusing what it read; 408, 409, 429 and a 5xx ask to be called again, as none does. */
    @Test
    void onlyAFourHundredButTimeoutAndTooManyIsARefusal() throws Exception {
        int[] status = new int[1];
        HttpServer carrier = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        carrier.createContext("/v1/shipments", exchange -> {
            exchange.sendResponseHeaders(status[0], -1);
            exchange.close();
        });
        carrier.start();
        try {
            CarrierClient client = new CarrierClient("http://127.0.0.1:" + carrier.getAddress().getPort(), TIMEOUT);
            for (int answered : new int[] {400, 403, 409, 410, 408, 429, 500, 502}) {
                status[0] = answered;
                boolean refusal = answered < 500 && answered != 408 && answered != 409 && answered != 429;
                assertThat(client.cancel("shp_1")).as("cancel answered %d", answered)
                        .isInstanceOfSatisfying(CarrierClient.CancelFailed.class,
                                failed -> assertThat(failed.refused()).isEqualTo(refusal));
                assertThat(client.find("key")).as("lookup answered %d", answered)
                        .isInstanceOfSatisfying(CarrierClient.LookupFailed.class,
                                failed -> assertThat(failed.refused()).isEqualTo(refusal));
            }
        } finally {
            carrier.stop(0);
        }
    }

    /** Recorded, such an id would fail the shipment's transaction on every attempt, the call made again each time. */
    @Test
    void aShipmentIdNoColumnHoldsIsAnUncertainOutageAndAFailedLookup() throws Exception {
        String tooLong = "shp_" + "9".repeat(200);
        HttpServer carrier = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        carrier.createContext("/v1/shipments", exchange -> {
            byte[] body = ("{\"shipmentId\": \"" + tooLong + "\", \"status\": \"created\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders("POST".equals(exchange.getRequestMethod()) ? 201 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        carrier.start();
        try {
            CarrierClient client = new CarrierClient("http://127.0.0.1:" + carrier.getAddress().getPort(), TIMEOUT);
            assertThat(client.create(UUID.randomUUID().toString(), "ref", ADA))
                    .isInstanceOfSatisfying(Unavailable.class,
                            u -> assertThat(u.uncertain()).as("the carrier may have created it").isTrue());
            assertThat(client.find("key")).isInstanceOfSatisfying(CarrierClient.LookupFailed.class,
                    failed -> assertThat(failed.reason()).contains("an id of 204 characters"));
        } finally {
            carrier.stop(0);
        }
    }

    @Test
    void carrierThatIsNotListeningIsUnavailableAndCreatedNothing() throws Exception {
        int freePort;
        try (ServerSocket socket = new ServerSocket(0)) {
            freePort = socket.getLocalPort();
        }
        CarrierClient nowhere = new CarrierClient("http://127.0.0.1:" + freePort, TIMEOUT);
        assertThat(nowhere.create(UUID.randomUUID().toString(), "ref", ADA))
                .isInstanceOfSatisfying(Unavailable.class, u -> assertThat(u.uncertain()).isFalse());
        assertThat(nowhere.find("key")).isInstanceOfSatisfying(CarrierClient.LookupFailed.class,
                failed -> assertThat(failed.refused()).isFalse());
        assertThat(nowhere.cancel("shp_1")).isInstanceOfSatisfying(CarrierClient.CancelFailed.class,
                failed -> assertThat(failed.refused()).isFalse());
    }
}
