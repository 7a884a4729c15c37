package dev.ordersaga.inventory.rest;

import dev.ordersaga.http.NoControlCharacters;
import dev.ordersaga.http.Problem;
import dev.ordersaga.http.ProblemException;
import dev.ordersaga.inventory.application.InventoryService;
import dev.ordersaga.inventory.application.StockChangedException;
import dev.ordersaga.inventory.domain.Stock;
import io.vertx.core.http.HttpServerRequest;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

@Path("/stock")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class StockResource {

    /** RFC 9110's If-Match: "*" or a list of entity tags; a weak tag never matches (strong comparison). */
    private static final Pattern IF_MATCH = Pattern.compile("\\s*(\\*|(W/)?\"[^\"]*\"(\\s*,\\s*(W/)?\"[^\"]*\")*)\\s*");
    private static final Pattern ENTITY_TAG = Pattern.compile("(W/)?\"([^\"]*)\"");

    @Inject
    InventoryService inventory;

    /**
     * Sets the available units of a SKU, creating it; reserved and shipped units stay as they are. An operator's (or
     * the shop's back office, under that role): every order is reserved against this count, and anyone who could set it
     * could fail every order, or sell stock there is none of.
     * <p>
     * A count worked out from an earlier GET (units on the shelf less those reserved) is right only while the counts
     * are still those: the saga reserves and releases units meanwhile, and a blind set would sell units twice or lose
     * released ones. With the GET's ETag in If-Match the set is made only if they are, else 412 and nothing changes.
     */
    @PUT
    @Path("/{sku}")
    @RolesAllowed("operator")
    public Response set(@PathParam("sku") @NotBlank @Size(max = 64) @NoControlCharacters String sku,
                        @HeaderParam(HttpHeaders.IF_MATCH) String ifMatchParameter,
                        @NotNull @Valid SetStockRequest request,
                        @Context HttpServerRequest http) {
        // the header param is null for a header sent without a value, as for none, and holds only a header's first
        // line: taken so, an empty If-Match (a script's unset variable) made the set a blind one
        List<String> sent = http.headers().getAll(HttpHeaders.IF_MATCH);
        String ifMatch = sent.isEmpty() ? ifMatchParameter : String.join(",", sent);
        Stock stock;
        try {
            if (ifMatch == null) {
                stock = inventory.setAvailable(sku, request.quantity());
            } else {
                try {
                    stock = inventory.setAvailable(sku, request.quantity(), ifMatch(ifMatch));
                } catch (StockChangedException changed) {
                    Response.ResponseBuilder refused = Response.status(Response.Status.PRECONDITION_FAILED)
                            .type(Problem.MEDIA_TYPE)
                            .entity(new Problem("about:blank", "Stock changed", 412, changed.getMessage(), null));
                    return (changed.current() == null ? refused : refused.tag(new EntityTag(changed.current().tag())))
                            .build();
                }
            }
        } catch (ArithmeticException tooMany) {
            // stocked counts every unit ever made available: a SKU refilled and sold for long enough outgrows the
            // column, and the set is refused (rolled back) rather than answered with a 500
            throw new ProblemException(Response.Status.CONFLICT, "Stock count too large", "the units ever stocked of "
                    + sku + " would pass " + Long.MAX_VALUE + ", which its counts cannot keep; nothing was set");
        }
        return Response.ok(StockView.of(stock)).tag(new EntityTag(stock.tag())).build();
    }

    @GET
    @Path("/{sku}")
    public Response get(@PathParam("sku") @NoControlCharacters String sku) {
        Stock stock = inventory.findStock(sku).orElseThrow(() ->
                new ProblemException(Response.Status.NOT_FOUND, "Stock not found", "no stock for SKU " + sku));
        return Response.ok(StockView.of(stock)).tag(new EntityTag(stock.tag())).build();
    }

    /**
     * If-Match as the counts it admits: any existing SKU's for a bare *, else the opaque parts of its strong tags; weak
     * ones are left out, as they never match. A quoted "*" is a tag like any other, which no counts have.
     */
    static InventoryService.IfMatch ifMatch(String ifMatch) {
        if (!IF_MATCH.matcher(ifMatch).matches()) {
            throw new ProblemException(Response.Status.BAD_REQUEST, "Invalid header",
                    "If-Match is \"*\" or a list of quoted entity tags, as a GET of the stock answers in ETag");
        }
        if (ifMatch.strip().equals("*")) {
            return InventoryService.IfMatch.ANY;
        }
        Set<String> tags = new LinkedHashSet<>();
        Matcher tag = ENTITY_TAG.matcher(ifMatch);
        while (tag.find()) {
            if (tag.group(1) == null) {
                tags.add(tag.group(2));
            }
        }
        return new InventoryService.IfMatch(false, tags);
    }
}
