-- Units ever made available by PUT /stock/{sku}: the "initial" of stock conservation, which the audit
-- (deploy/audit) checks as stocked = available + reserved + shipped. A PUT of quantity N adds N - (available before);
-- reserving, releasing and consuming move units between the other three counts and leave it alone.
ALTER TABLE stock ADD COLUMN stocked integer NOT NULL DEFAULT 0;

-- Rows from before this column: what they hold now is all that can be known of what they were given.
UPDATE stock SET stocked = available + reserved + shipped;
