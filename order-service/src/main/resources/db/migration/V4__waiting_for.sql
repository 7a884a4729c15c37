-- Which participant an order waits on an operator for: SHIPPING (the carrier stayed down) or PAYMENT (the provider has
-- no charge under a key it may have forgotten). Each is resolved differently (retry-shipping only for SHIPPING), and
-- each participant's own news ends only its own wait. Every wait before this column was a shipment's.
ALTER TABLE orders ADD COLUMN waiting_for varchar(16);
UPDATE orders SET waiting_for = 'SHIPPING' WHERE waiting_reason IS NOT NULL;
ALTER TABLE orders ADD CONSTRAINT orders_waiting_for_check
    CHECK ((waiting_reason IS NULL) = (waiting_for IS NULL) AND waiting_for IN ('PAYMENT', 'SHIPPING'));
