package dev.ordersaga.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CrossSiteRequestsTest {

    @Test
    void aPageOfThisApisOwnAddressIsItsOwnOrigin() {
        assertThat(CrossSiteRequests.sameOrigin("http://localhost:8081", "localhost:8081")).isTrue();
        assertThat(CrossSiteRequests.sameOrigin("http://API.example", "api.example")).isTrue();
        assertThat(CrossSiteRequests.sameOrigin("https://api.example", "api.example:443")).as("default port in Host")
                .isTrue();
        assertThat(CrossSiteRequests.sameOrigin("https://api.example:443", "api.example")).as("default port in Origin")
                .isTrue();
    }

    @Test
    void anotherSitesPageOrAnOpaqueOneIsNot() {
        assertThat(CrossSiteRequests.sameOrigin("https://attacker.example", "api.example")).isFalse();
        assertThat(CrossSiteRequests.sameOrigin("http://localhost:8082", "localhost:8081")).as("another port")
                .isFalse();
        assertThat(CrossSiteRequests.sameOrigin("http://api.example:443", "api.example")).as("443 is not http's")
                .isFalse();
        assertThat(CrossSiteRequests.sameOrigin("null", "api.example")).as("a sandboxed page").isFalse();
        assertThat(CrossSiteRequests.sameOrigin("https://api.example", null)).as("no Host to compare").isFalse();
        assertThat(CrossSiteRequests.sameOrigin("not a uri", "api.example")).isFalse();
    }
}
