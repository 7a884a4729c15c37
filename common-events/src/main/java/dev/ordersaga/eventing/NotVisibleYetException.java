package dev.ordersaga.eventing;

/**
 * An event about a row its consumer's database does not show, where the row may exist all the same: PostgreSQL
 * streams a commit to the relays once its WAL is flushed, a moment before the committing session makes it visible
 * to the others (its end of commit), and on a busy machine that session can lose the CPU in between for longer
 * than the event needs to go around the saga and come back. order-service hit it: a POST's OrderCreated went through
 * inventory, whose StockReserved found no order yet and, had it been skipped, the saga would have stopped there.
 *
 * <p>{@link IncomingEvents#process} retries it as a passing failure, in a new transaction (the claim of the attempt
 * rolls back with it), and parks the message if the row still does not show after
 * {@code eventing.consumer.not-visible-attempts} attempts: then it is about a row this service never had, and parked
 * it is kept for an operator instead of stopping the channel.
 */
public class NotVisibleYetException extends RuntimeException {

    public NotVisibleYetException(String message) {
        super(message);
    }
}
