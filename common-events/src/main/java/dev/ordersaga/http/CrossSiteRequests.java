package dev.ordersaga.http;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import java.net.URI;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Refuses a state-changing request with HTTP basic credentials that a browser sent from another site's page
 * (cross-site request forgery). A browser attaches the basic credentials it cached for this API to any request to it,
 * a form's POST from another site among them, and an operator action without a body (a payment's retry, a replay)
 * needs nothing else to act. Browsers name the page's origin in {@code Origin}, and say {@code cross-site} in
 * {@code Sec-Fetch-Site}, on such requests; scripts, services and the provider's webhooks send neither, and a browser
 * never attaches a bearer token by itself, so only requests that carry basic credentials are looked at.
 */
public class CrossSiteRequests {

    private static final Logger LOG = Logger.getLogger(CrossSiteRequests.class);
    private static final Set<String> READS = Set.of("GET", "HEAD", "OPTIONS");

    @ServerRequestFilter
    public Optional<Response> refuseForeignPages(ContainerRequestContext request) {
        if (READS.contains(request.getMethod()) || !basic(request.getHeaderString(HttpHeaders.AUTHORIZATION))) {
            return Optional.empty();
        }
        String origin = request.getHeaderString("Origin");
        String site = request.getHeaderString("Sec-Fetch-Site");
        if (!"cross-site".equalsIgnoreCase(site) && (origin == null || sameOrigin(origin,
                request.getHeaderString(HttpHeaders.HOST)))) {
            return Optional.empty();
        }
        LOG.warnf("Refused %s %s with basic credentials from another site's page (Origin %s, Sec-Fetch-Site %s)",
                request.getMethod(), request.getUriInfo().getPath(), shown(origin),
                shown(site));
        return Optional.of(Response.status(403).type(Problem.MEDIA_TYPE)
                .entity(new Problem("about:blank", "Cross-site request refused", 403, "a change asked with basic "
                        + "credentials from another site's page is not made: send it from a script or a tool",
                        null))
                .build());
    }

    /** A header as the log may take it: another site chose it, so no control character and no length of its own. */
    private static String shown(String header) {
        if (header == null) {
            return "absent";
        }
        String cut = header.length() > 200 ? header.substring(0, 200) + "..." : header;
        return cut.replaceAll("\\p{Cntrl}", "?");
    }

    private static boolean basic(String authorization) {
        return authorization != null && authorization.regionMatches(true, 0, "Basic ", 0, 6);
    }

    /** Whether the page's origin is this API's own address, as the request names it. */
    static boolean sameOrigin(String origin, String host) {
        if (host == null) {
            return false;
        }
        try {
            URI page = URI.create(origin.strip());
            if (page.getHost() == null) {
                return false; // "null": a sandboxed or opaque origin
            }
            String authority = page.getPort() == -1 ? page.getHost() : page.getHost() + ":" + page.getPort();
            // a default port is left out of Host and of Origin alike, but either may carry it
            return withoutDefaultPort(authority.toLowerCase(Locale.ROOT), page.getScheme())
                    .equals(withoutDefaultPort(host.strip().toLowerCase(Locale.ROOT), page.getScheme()));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String withoutDefaultPort(String authority, String scheme) {
        String defaultPort = "https".equalsIgnoreCase(scheme) ? ":443" : ":80";
        return authority.endsWith(defaultPort) ? authority.substring(0, authority.length() - defaultPort.length())
                : authority;
    }
}
