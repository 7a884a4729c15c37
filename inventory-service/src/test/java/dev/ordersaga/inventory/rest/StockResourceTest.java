package dev.ordersaga.inventory.rest;

import dev.ordersaga.inventory.InventoryRows;
import dev.ordersaga.testing.RawHttp;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

@QuarkusTest
@WithTestResource(StackTestResource.class)
class StockResourceTest {

    @Inject
    DataSource dataSource;

    @Test
    void putCreatesTheSkuAndGetShowsIt() throws Exception {
        String sku = InventoryRows.newSku("put");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 7}")
                .when().put("/stock/" + sku)
                .then().statusCode(200)
                .contentType(ContentType.JSON)
                .body("sku", equalTo(sku))
                .body("available", equalTo(7))
                .body("reserved", equalTo(0))
                .body("shipped", equalTo(0));

        given().when().get("/stock/" + sku)
                .then().statusCode(200)
                .body("sku", equalTo(sku))
                .body("available", equalTo(7))
                .body("reserved", equalTo(0))
                .body("shipped", equalTo(0));
        assertThat(new InventoryRows(dataSource).stock(sku)).isEqualTo("7/0/0");
        assertThat(new InventoryRows(dataSource).count("SELECT stocked FROM stock WHERE sku = ?", sku)).isEqualTo(7);
    }

    @Test
    void putAgainSetsTheAvailableUnits() throws Exception {
        String sku = InventoryRows.newSku("reput");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 7}").when().put("/stock/" + sku).then().statusCode(200);
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 0}")
                .when().put("/stock/" + sku)
                .then().statusCode(200)
                .body("available", equalTo(0));
        assertThat(new InventoryRows(dataSource).stock(sku)).isEqualTo("0/0/0");
        assertThat(new InventoryRows(dataSource).count("SELECT stocked FROM stock WHERE sku = ?", sku))
                .as("stocked: 7 made available, then taken away").isZero();
    }

    /**
     * An operator works out the count from a GET (units on the shelf less those reserved); the saga reserves a unit
     * before the set lands. With the GET's ETag in If-Match the set is refused and nothing is sold twice; read again,
     * it is made.
     */
    @Test
    void aSetConditionalOnCountsThatChangedIsRefusedAndChangesNothing() throws Exception {
        String sku = InventoryRows.newSku("ifmatch");
        String first = asOperator().contentType(ContentType.JSON).body("{\"quantity\": 5}")
                .when().put("/stock/" + sku).then().statusCode(200).extract().header("ETag");
        String read = given().when().get("/stock/" + sku).then().statusCode(200).extract().header("ETag");
        assertThat(read).isEqualTo(first).isEqualTo("\"5-0-0\"");
        moveOneToReserved(sku);

        asOperator().contentType(ContentType.JSON).header("If-Match", read).body("{\"quantity\": 5}")
                .when().put("/stock/" + sku)
                .then().statusCode(412)
                .contentType("application/problem+json")
                .header("ETag", "\"4-1-0\"")
                .body("title", equalTo("Stock changed"))
                .body("detail", containsString("now 4 available, 1 reserved, 0 shipped"));
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing set").isEqualTo("4/1/0");

        String again = given().when().get("/stock/" + sku).then().statusCode(200).extract().header("ETag");
        asOperator().contentType(ContentType.JSON).header("If-Match", "\"0-0-0\", " + again).body("{\"quantity\": 6}")
                .when().put("/stock/" + sku)
                .then().statusCode(200)
                .header("ETag", "\"6-1-0\"")
                .body("available", equalTo(6));
        assertThat(new InventoryRows(dataSource).stock(sku)).isEqualTo("6/1/0");
    }

    @Test
    void ifMatchOnAMissingSkuCreatesNothingAndAMalformedOneIsRejected() throws Exception {
        String sku = InventoryRows.newSku("ifmatch-none");
        asOperator().contentType(ContentType.JSON).header("If-Match", "*").body("{\"quantity\": 5}")
                .when().put("/stock/" + sku)
                .then().statusCode(412)
                .contentType("application/problem+json")
                .body("detail", containsString("there is no stock for SKU " + sku));
        asOperator().contentType(ContentType.JSON).header("If-Match", "5-0-0").body("{\"quantity\": 5}")
                .when().put("/stock/" + sku)
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("title", equalTo("Invalid header"));
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing created").isNull();

        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 5}").when().put("/stock/" + sku)
                .then().statusCode(200);
        asOperator().contentType(ContentType.JSON).header("If-Match", "W/\"5-0-0\"").body("{\"quantity\": 1}")
                .when().put("/stock/" + sku)
                .then().statusCode(412);
        // a quoted * is an entity tag, which no counts have, not the wildcard
        for (String quoted : List.of("\"*\"", "\"0-0-0\", \"*\"")) {
            asOperator().contentType(ContentType.JSON).header("If-Match", quoted).body("{\"quantity\": 1}")
                    .when().put("/stock/" + sku)
                    .then().statusCode(412)
                    .contentType("application/problem+json");
        }
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing set").isEqualTo("5/0/0");
        asOperator().contentType(ContentType.JSON).header("If-Match", "*").body("{\"quantity\": 1}")
                .when().put("/stock/" + sku)
                .then().statusCode(200)
                .body("available", equalTo(1));
    }

    /**
     * An If-Match sent without a value (a script's unset variable) or whose first line is empty is no If-Match: the
     * HTTP layer hands the resource null for either, as for a set without one, which is made whatever the counts. Sent
     * over a plain socket, since HTTP clients may drop such a header.
     */
    @Test
    void anEmptyIfMatchIsRejectedAndSetsNothing() throws Exception {
        String sku = InventoryRows.newSku("ifmatch-empty");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 5}").when().put("/stock/" + sku)
                .then().statusCode(200);
        byte[] body = "{\"quantity\": 7}".getBytes(StandardCharsets.UTF_8);
        String credentials = Base64.getEncoder().encodeToString("operator:operator".getBytes(StandardCharsets.UTF_8));
        for (String ifMatch : List.of("If-Match:\r\n", "If-Match:   \r\n", "If-Match:\r\nIf-Match: \"5-0-0\"\r\n")) {
            String answer = RawHttp.exchange(RestAssured.port, "PUT /stock/" + sku, "Content-Type: application/json\r\n"
                    + "Authorization: Basic " + credentials + "\r\n" + ifMatch, body);
            assertThat(answer).as(ifMatch).startsWith("HTTP/1.1 400").contains("application/problem+json")
                    .contains("Invalid header");
        }
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing set").isEqualTo("5/0/0");
    }

    /**
     * A SKU refilled and sold for long enough: the units ever stocked past 2^31 - 1, which integer counts refused, and
     * then near what the columns keep.
     */
    @Test
    void aSetThatWouldOutgrowTheStockedCountIsAConflictAndSetsNothing() throws Exception {
        String sku = InventoryRows.newSku("outgrown");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 0}").when().put("/stock/" + sku)
                .then().statusCode(200);
        soldAlready(sku, 2147483000L);
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 1000}").when().put("/stock/" + sku)
                .then().statusCode(200)
                .body("shipped", equalTo(2147483000));
        assertThat(stocked(sku)).isEqualTo(2147484000L);

        soldAlready(sku, Long.MAX_VALUE - 1800); // stocked 800 short of the most
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 2000}").when().put("/stock/" + sku)
                .then().statusCode(409)
                .contentType("application/problem+json")
                .body("title", equalTo("Stock count too large"));
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing set")
                .isEqualTo("1000/0/" + (Long.MAX_VALUE - 1800));
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 1600}").when().put("/stock/" + sku)
                .then().statusCode(200);
        assertThat(stocked(sku)).isEqualTo(Long.MAX_VALUE - 200);
    }

    /** As the saga leaves a SKU that shipped so many units: stocked = available + shipped. */
    private void soldAlready(String sku, long shipped) throws Exception {
        try (var c = dataSource.getConnection();
             var ps = c.prepareStatement("UPDATE stock SET shipped = ?, stocked = available + ? WHERE sku = ?")) {
            ps.setLong(1, shipped);
            ps.setLong(2, shipped);
            ps.setString(3, sku);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    private long stocked(String sku) throws Exception {
        try (var c = dataSource.getConnection();
             var ps = c.prepareStatement("SELECT stocked FROM stock WHERE sku = ?")) {
            ps.setString(1, sku);
            try (var rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getLong(1);
            }
        }
    }

    /** What a reservation does to the counts, as another transaction would between an operator's GET and PUT. */
    private void moveOneToReserved(String sku) throws Exception {
        try (var c = dataSource.getConnection();
             var ps = c.prepareStatement(
                     "UPDATE stock SET available = available - 1, reserved = reserved + 1 WHERE sku = ?")) {
            ps.setString(1, sku);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }

    @Test
    void negativeQuantityIsRejectedWithProblemDetails() throws Exception {
        String sku = InventoryRows.newSku("negative");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": -1}")
                .when().put("/stock/" + sku)
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("title", equalTo("Invalid request"))
                .body("status", equalTo(400))
                .body("violations.field", contains("quantity"));
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing created").isNull();
    }

    @Test
    void missingQuantityIsRejectedWithProblemDetails() {
        asOperator().contentType(ContentType.JSON).body("{}")
                .when().put("/stock/" + InventoryRows.newSku("missing"))
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("violations.field", contains("quantity"));
    }

    @Test
    void malformedOrMissingBodyIsRejectedWithProblemDetails() {
        String sku = InventoryRows.newSku("malformed");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": \"many\"}")
                .when().put("/stock/" + sku)
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("title", equalTo("Invalid request"))
                .body("violations.field", contains("quantity"))
                .body("status", equalTo(400));
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": ")
                .when().put("/stock/" + sku)
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("status", equalTo(400));
        asOperator().contentType(ContentType.JSON)
                .when().put("/stock/" + sku)
                .then().statusCode(400)
                .contentType("application/problem+json");
    }

    @Test
    void overlongSkuIsRejectedWithProblemDetails() {
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 1}")
                .when().put("/stock/" + "S".repeat(65))
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("title", equalTo("Invalid request"));
    }

    /** Jackson would cut it to 2 by default, and the SKU would be stocked with other than was asked. */
    @Test
    void aFractionOfAUnitIsRejectedAndNothingIsSet() throws Exception {
        String sku = InventoryRows.newSku("fraction");
        asOperator().contentType(ContentType.JSON).body("{\"quantity\": 2.9}")
                .when().put("/stock/" + sku)
                .then().statusCode(400)
                .contentType("application/problem+json")
                .body("violations.field", contains("quantity"))
                .body("violations.message", contains("must be a whole number"));
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing created").isNull();
    }

    /** PostgreSQL refuses a NUL in text: without the check the insert failed after validation, a 500. */
    @Test
    void aSkuWithAControlCharacterIsRejected() throws Exception {
        for (String sku : List.of(InventoryRows.newSku("nul") + "%00X", InventoryRows.newSku("tab") + "%09X")) {
            asOperator().urlEncodingEnabled(false).contentType(ContentType.JSON).body("{\"quantity\": 1}")
                    .when().put("/stock/" + sku)
                    .then().statusCode(400)
                    .contentType("application/problem+json")
                    .body("violations.message", contains("must not contain control characters"));
            given().urlEncodingEnabled(false).when().get("/stock/" + sku)
                    .then().statusCode(400)
                    .contentType("application/problem+json");
        }
    }

    @Test
    void settingStockWithoutAnOperatorsCredentialsIsRefusedAndSetsNothing() throws Exception {
        String sku = InventoryRows.newSku("anonymous");
        given().contentType(ContentType.JSON).body("{\"quantity\": 7}")
                .when().put("/stock/" + sku)
                .then().statusCode(401)
                .contentType("application/problem+json")
                .body("status", equalTo(401));
        given().auth().preemptive().basic("operator", "not-the-password").contentType(ContentType.JSON)
                .body("{\"quantity\": 7}")
                .when().put("/stock/" + sku)
                .then().statusCode(401)
                .contentType("application/problem+json");
        assertThat(new InventoryRows(dataSource).stock(sku)).as("nothing created").isNull();
    }

    @Test
    void unknownSkuIsNotFound() {
        String sku = InventoryRows.newSku("unknown");
        given().when().get("/stock/" + sku)
                .then().statusCode(404)
                .contentType("application/problem+json")
                .body("title", equalTo("Stock not found"))
                .body("status", equalTo(404))
                .body("detail", containsString(sku));
    }

    /** The test profile's operator account, "operator" with the password "operator" (common-events' configuration). */
    private static RequestSpecification asOperator() {
        return given().auth().preemptive().basic("operator", "operator");
    }
}
