-- When charging began: a provider's "no charge under this key" is trusted only while the key is young enough that the
-- provider still keeps it (payment.charge.recharge-window). Payments that were charging before this column existed
-- take their creation, which is earlier: they are judged older, never younger, than they are.
ALTER TABLE payment ADD COLUMN charging_since timestamptz;
UPDATE payment SET charging_since = created_at WHERE status <> 'PENDING';
