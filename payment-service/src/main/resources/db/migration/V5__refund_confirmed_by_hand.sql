-- A refund the provider's API keeps refusing can be settled outside it by an operator, who then confirms it
-- (POST /operator/payments/{orderId}/confirm-refunded). Their word is kept with the payment (the name whole, as the
-- identity provider gives it: no standard bounds its length), and a call of the worker that may still be under way
-- decides first: claimed_until is the end of the last claim's lease, which tells a claim from a backoff (both move
-- next_attempt_at on). A row claimed before this column existed has none: its claim is taken as over, which a lease
-- of seconds has made true long before an operator could confirm anything.
ALTER TABLE payment ADD COLUMN claimed_until timestamptz;
ALTER TABLE payment ADD COLUMN refund_confirmed_by text;
ALTER TABLE payment ADD COLUMN refund_confirmation varchar(512);
