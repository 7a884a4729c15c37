-- A second charge whose refund the provider's API keeps refusing (a disputed charge, a closed account) is ended by an
-- operator who returned the money another way (POST /operator/payments/{orderId}/surplus-charges/{chargeId}/
-- confirm-refunded), as the payment's own refund is, and on the same terms: only once the provider's last answer to
-- it was a refusal (undo_refused; a call that went unanswered may have refunded), and not while a call may be under
-- way (claimed_until, the end of the last claim's lease, which next_attempt_at equals while the call runs). Their word
-- is kept with the row: who (the name whole, as the identity provider gives it) and why; undo_ref is the refund they
-- named at the provider, null where the money went back outside it. The undo is done once undone_at is set, by the
-- provider's answer or an operator's word.
-- Every undo the service recorded set undone_at with undo_ref; a row changed by hand with only undo_ref set (as an
-- older test of the service did) is done all the same, as the new constraint has it.
UPDATE surplus_charge SET undone_at = found_at WHERE undo_ref IS NOT NULL AND undone_at IS NULL;

ALTER TABLE surplus_charge
    ADD COLUMN undo_refused boolean NOT NULL DEFAULT false,
    ADD COLUMN claimed_until timestamptz,
    ADD COLUMN undone_by text,
    ADD COLUMN undo_confirmation varchar(512),
    DROP CONSTRAINT surplus_charge_check,
    ADD CONSTRAINT surplus_charge_owed_until_undone CHECK ((undone_at IS NULL) = (next_attempt_at IS NOT NULL)),
    ADD CONSTRAINT surplus_charge_undone_by_provider_or_hand
        CHECK (undone_at IS NULL OR undo_ref IS NOT NULL OR undone_by IS NOT NULL);
