-- An operator may end a cancellation the carrier's API keeps refusing (POST /operator/shipments/{orderId}/confirm-
-- cancelled) only once the carrier's last answer to it was a refusal: a call that went unanswered (a timeout, a 5xx,
-- the carrier down) may yet cancel, or the parcel may yet be found, and is asked again first. Every claim clears it.
-- Rows from before the column count as not refused: the next failed attempt says.
ALTER TABLE shipment ADD COLUMN cancel_refused boolean NOT NULL DEFAULT false;
