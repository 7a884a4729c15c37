package dev.ordersaga.inventory.rest;

import dev.ordersaga.inventory.InventoryRows;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;

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
