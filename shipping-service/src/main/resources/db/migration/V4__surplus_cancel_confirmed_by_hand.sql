-- A second parcel whose cancel the carrier's API keeps refusing is ended by an operator who settled it with the
-- carrier another way (POST /operator/shipments/{orderId}/surplus-parcels/{carrierShipmentId}/confirm-cancelled), as
-- the shipment's own cancel is, and on the same terms: only once the carrier's last answer to it was a refusal
-- (undo_refused; a call that went unanswered may have cancelled), and not while a call may be under way
-- (claimed_until, the end of the last claim's lease, which next_attempt_at equals while the call runs). Their word is
-- kept with the row: who (the name whole, as the identity provider gives it) and why; undo_ref stays null. The undo is
-- done once undone_at is set, by the carrier's answer or an operator's word.
-- Every undo the service recorded set undone_at with undo_ref; a row changed by hand with only undo_ref set (as an
-- older test of the service did) is done all the same, as the new constraint has it.
UPDATE surplus_shipment SET undone_at = found_at WHERE undo_ref IS NOT NULL AND undone_at IS NULL;

ALTER TABLE surplus_shipment
    ADD COLUMN undo_refused boolean NOT NULL DEFAULT false,
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN undone_by text,
    ADD COLUMN undo_confirmation varchar(512),
    DROP CONSTRAINT surplus_shipment_check,
    ADD CONSTRAINT surplus_shipment_owed_until_undone CHECK ((undone_at IS NULL) = (next_attempt_at IS NOT NULL)),
    ADD CONSTRAINT surplus_shipment_undone_by_provider_or_hand
        CHECK (undone_at IS NULL OR undo_ref IS NOT NULL OR undone_by IS NOT NULL);
