-- A payment token lets whoever holds it charge the customer, and a payment past charging never charges again
-- (Payment.moveTo forgets it from now on): the tokens of payments that left charging before that are forgotten too.
UPDATE payment SET payment_token = NULL WHERE status NOT IN ('PENDING', 'CHARGING') AND payment_token IS NOT NULL;
