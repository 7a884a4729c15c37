package dev.ordersaga.order.rest;

import dev.ordersaga.order.testing.OrderRows;
import dev.ordersaga.testing.IdentityProviderStandIn;
import dev.ordersaga.testing.IdentityProviderTestResource;
import dev.ordersaga.testing.Orders;
import dev.ordersaga.testing.StackTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;

/**
 * Operators signed in through the company's identity provider: a bearer token it issued for these services, checked
 * against the keys it publishes, lets a person of the group operator in under the token's name. The in-process
 * tests' basic account stays usable beside it, as a break-glass account would.
 */
@QuarkusTest
@WithTestResource(StackTestResource.class)
@WithTestResource(IdentityProviderTestResource.class)
class OperatorSignInTest {

    private final IdentityProviderStandIn provider = IdentityProviderStandIn.shared();

    @Inject
    DataSource dataSource;

    @Test
    void aPersonTheProviderPutInTheOperatorGroupActsUnderTheTokensName() {
        String orderId = place();
        given().auth().oauth2(provider.tokenFor("carol", "staff", "operator")).contentType(ContentType.JSON)
                .body("{\"reason\": \"customer called\"}")
                .post("/operator/orders/{id}/cancel", orderId)
                .then().statusCode(202).body("status", equalTo("COMPENSATING"));
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", orderId)
                .then().statusCode(200)
                .body("action", equalTo(List.of("cancel")))
                .body("operator", equalTo(List.of("carol")));
    }

    /** Where the roles come from: groups; without any, Keycloak's realm roles; a group of another name, mapped. */
    @Test
    void theRoleIsReadFromTheGroupsOrKeycloaksRealmRolesOrAGroupMappedToIt() {
        Map<String, Object> realmRole = provider.claimsFor("erin");
        realmRole.remove("groups");
        realmRole.put("realm_access", Map.of("roles", List.of("operator")));
        assertThat(cancelStatus(provider.sign(realmRole))).as("a realm role, no groups").isEqualTo(202);
        assertThat(cancelStatus(provider.tokenFor("frank", IdentityProviderTestResource.MAPPED_GROUP)))
                .as("a group mapped to the role").isEqualTo(202);
        // groups, where the token has any, are the roles: a realm role beside them is not read
        Map<String, Object> both = provider.claimsFor("grace", "staff");
        both.put("realm_access", Map.of("roles", List.of("operator")));
        assertThat(cancelStatus(provider.sign(both))).isEqualTo(403);
    }

    /** The name an action is logged under: upn before preferred_username before sub, as Quarkus reads them. */
    @Test
    void anActionIsLoggedUnderTheTokensUpnFirst() {
        String orderId = place();
        Map<String, Object> claims = provider.claimsFor("heidi", "operator");
        claims.put("upn", "heidi@staff.example");
        given().auth().oauth2(provider.sign(claims)).contentType(ContentType.JSON).body("{}")
                .post("/operator/orders/{id}/cancel", orderId).then().statusCode(202);
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", orderId)
                .then().body("operator", equalTo(List.of("heidi@staff.example")));
    }

    /** No standard bounds a name below an e-mail address's 254 characters: a longer one acts and is recorded whole. */
    @Test
    void aPersonWithALongNameActsAndIsRecordedUnderItWhole() {
        String orderId = place();
        String name = "h".repeat(240) + "@staff.example";
        Map<String, Object> claims = provider.claimsFor("heidi", "operator");
        claims.put("upn", name);
        given().auth().oauth2(provider.sign(claims)).contentType(ContentType.JSON).body("{}")
                .post("/operator/orders/{id}/cancel", orderId).then().statusCode(202);
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", orderId)
                .then().body("operator", equalTo(List.of(name)))
                .body("detail", equalTo(List.of("cancelled by an operator")));
    }

    /** A provider rolls its signing key over: a token under the new key is taken without a restart, one under the old too. */
    @Test
    void aTokenSignedWithTheProvidersNextKeyIsTakenWithoutARestart() {
        String underTheOldKey = provider.tokenFor("ivan", "operator");
        provider.rotateKeys();
        assertThat(cancelStatus(provider.tokenFor("judy", "operator"))).as("the new key").isEqualTo(202);
        assertThat(cancelStatus(underTheOldKey)).as("the old key, still published").isEqualTo(202);
    }

    @Test
    void aPersonOutsideTheOperatorGroupIsForbidden() {
        String orderId = place();
        given().auth().oauth2(provider.tokenFor("dave", "staff")).contentType(ContentType.JSON).body("{}")
                .post("/operator/orders/{id}/cancel", orderId)
                .then().statusCode(403).contentType("application/problem+json");
        given().get("/orders/{id}", orderId).then().body("status", equalTo("PENDING"));
    }

    @Test
    void aTokenForgedExpiredOrIssuedForAnotherApplicationOrByAnotherIssuerIsRefused() {
        String orderId = place();
        Map<String, Object> expired = provider.claimsFor("carol", "operator");
        expired.put("iat", Instant.now().minusSeconds(3600).getEpochSecond());
        expired.put("exp", Instant.now().minusSeconds(600).getEpochSecond());
        Map<String, Object> otherApplication = provider.claimsFor("carol", "operator");
        otherApplication.put("aud", "the-wiki");
        Map<String, Object> otherIssuer = provider.claimsFor("carol", "operator");
        otherIssuer.put("iss", "https://idp.example.org");
        for (String token : List.of(provider.forge(provider.claimsFor("carol", "operator")), provider.sign(expired),
                provider.sign(otherApplication), provider.sign(otherIssuer), "not-a-token")) {
            given().auth().oauth2(token).post("/operator/orders/{id}/cancel", orderId)
                    .then().statusCode(401)
                    .header("WWW-Authenticate", equalTo("Bearer error=\"invalid_token\""))
                    .contentType("application/problem+json")
                    .body("title", equalTo("Unauthorized"))
                    .body("detail", containsString("bearer token was refused"));
        }
        given().get("/orders/{id}", orderId).then().body("status", equalTo("PENDING"));
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders/{id}/actions", orderId)
                .then().body("action", equalTo(List.of()));
    }

    /** Credentials are checked wherever they are sent, as basic ones are: a gateway must not pass its own tokens on. */
    @Test
    void aCustomersRequestCarryingATokenNotTheProvidersIsRefused() throws SQLException {
        String correlationId = "sign-in-" + UUID.randomUUID();
        given().auth().oauth2(provider.forge(provider.claimsFor("mallory"))).contentType(ContentType.JSON)
                .header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                .post("/orders")
                .then().statusCode(401).contentType("application/problem+json");
        assertThat(OrderRows.withCorrelation(dataSource, correlationId)).as("orders of the refused request").isZero();
        given().contentType(ContentType.JSON).header("X-Correlation-Id", correlationId).body(Orders.requestJson())
                .post("/orders")
                .then().statusCode(201);
    }

    @Test
    void aRequestWithoutCredentialsIsToldBothWaysIn() {
        ValidatableResponse refused = given().get("/operator/orders?waiting=true").then().statusCode(401)
                .contentType("application/problem+json")
                .body("detail", containsString("bearer token"))
                .body("detail", containsString("basic authentication"));
        assertThat(refused.extract().headers().getValues("WWW-Authenticate")).containsExactlyInAnyOrder("Bearer", "basic");
    }

    @Test
    void theBasicAccountStillWorksBesideTheProvider() {
        given().auth().preemptive().basic("operator", "operator").get("/operator/orders?waiting=true")
                .then().statusCode(200);
        given().auth().preemptive().basic("operator", "wrong").get("/operator/orders?waiting=true")
                .then().statusCode(401).header("WWW-Authenticate", equalTo("basic"));
    }

    private static int cancelStatus(String token) {
        return given().auth().oauth2(token).contentType(ContentType.JSON).body("{}")
                .post("/operator/orders/{id}/cancel", place()).statusCode();
    }

    private static String place() {
        return given().contentType(ContentType.JSON).header("X-Correlation-Id", "sign-in-" + UUID.randomUUID())
                .body(Orders.requestJson())
                .post("/orders")
                .then().statusCode(201).extract().path("orderId");
    }
}
