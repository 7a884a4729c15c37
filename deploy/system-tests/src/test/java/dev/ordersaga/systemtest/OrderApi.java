package dev.ordersaga.systemtest;

import dev.ordersaga.testing.Orders;
import io.restassured.http.ContentType;

import java.util.UUID;

import static io.restassured.RestAssured.given;

/** The customer's side: POST /orders on a running order-service. */
final class OrderApi {

    private OrderApi() {
    }

    static UUID placeOrder(ServiceProcess orderService) {
        String id = given().baseUri(orderService.baseUrl()).contentType(ContentType.JSON)
                .body(Orders.requestJson())
                .when().post("/orders")
                .then().statusCode(201)
                .extract().path("orderId");
        return UUID.fromString(id);
    }
}
