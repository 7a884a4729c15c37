package dev.ordersaga.eventing;

import dev.ordersaga.http.ProblemException;
import dev.ordersaga.http.QueryParameters;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

import java.util.List;

/**
 * The messages this service parked ({@link DeadLetters}), for an operator to look at and, once the cause is mended,
 * to republish. Every service has it, for its own dead-letter topic.
 */
@Path("/operator/dead-letters")
@Produces(MediaType.APPLICATION_JSON)
@RolesAllowed("operator")
@Tag(name = "operator", description = "Messages this service parked (role operator)")
public class DeadLetterResource {

    @Inject
    DeadLetters deadLetters;

    @Inject
    SecurityIdentity identity;

    /**
     * @param before the next page: the offset of the last entry of this one (the earliest). The dead-letter topics have
     *               one partition; on a topic with more, it stands for the same offset in each.
     */
    @GET
    @Operation(summary = "The messages parked on this service's dead-letter topic, the latest first; with before, "
            + "the ones parked at lower offsets (the next page)")
    public List<DeadLetters.Parked> list(@QueryParam("limit") String limit, @QueryParam("before") String before) {
        return deadLetters.list(QueryParameters.limit(limit, 100, 1000), QueryParameters.position("before", before));
    }

    @POST
    @Path("/{partition}/{offset}/replay")
    @Operation(summary = "Republish a parked message to this service's replay topic (<service>.replay), which only "
            + "this service reads; if it applied the message meanwhile, it skips it")
    public Response replay(@PathParam("partition") int partition, @PathParam("offset") long offset) {
        DeadLetters.Replayed replayed;
        try {
            replayed = deadLetters.replay(partition, offset, identity.getPrincipal().getName())
                    .orElseThrow(() -> new ProblemException(Response.Status.NOT_FOUND, "No such parked message",
                            "nothing is parked at " + deadLetters.topic() + " partition " + partition + " offset " + offset));
        } catch (DeadLetters.TooOldToReplay e) {
            throw new ProblemException(Response.Status.CONFLICT, "Parked message too old to replay", e.getMessage());
        }
        return Response.accepted(replayed).build();
    }
}
