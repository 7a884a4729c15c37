package dev.ordersaga.http;

import io.quarkus.oidc.OIDCException;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.net.UnknownHostException;

import static org.assertj.core.api.Assertions.assertThat;

class RouterProblemsTest {

    @Test
    void aProviderOutOfReachIsToldFromAConfigurationQuarkusRefused() {
        // as Quarkus 3.33 reports a provider that refused the connection (OperatorAccountsIT meets it for real)
        assertThat(RouterProblems.providerOutOfReach(new OIDCException("OIDC Server is not available",
                new RuntimeException("OIDC Server is not available")))).isTrue();
        assertThat(RouterProblems.providerOutOfReach(new OIDCException(new ConnectException("Connection refused")))).isTrue();
        assertThat(RouterProblems.providerOutOfReach(new OIDCException(new UnknownHostException("login.example.com")))).isTrue();
        // a configuration refused is no outage: trying again would not help
        assertThat(RouterProblems.providerOutOfReach(new OIDCException("Tenant configuration has not been resolved"))).isFalse();
    }
}
