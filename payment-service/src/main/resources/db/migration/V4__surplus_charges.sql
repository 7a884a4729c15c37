-- A charge the provider settled under a payment's key that is not the charge the payment recorded: a second charge,
-- which a provider makes when it has forgotten the key and is charged again under it. The customer paid twice for one
-- payment, so the surplus is refunded (SurplusRefunds, dev.ordersaga.work.Surpluses), under a key of its own, and
-- retried until the provider takes it. One row per charge: the report's two looks at an entry, and replicas reading
-- the same page, find it once.
CREATE TABLE surplus_charge (
    id              uuid          PRIMARY KEY,
    provider_ref    varchar(255)  NOT NULL UNIQUE, -- the provider's id of the second charge
    owner_id        uuid          NOT NULL REFERENCES payment (id),
    order_id        uuid          NOT NULL,
    correlation_id  varchar(128)  NOT NULL,
    undo_ref        varchar(255),                  -- the provider's id of the refund
    attempts        integer       NOT NULL CHECK (attempts >= 0),
    next_attempt_at timestamptz,                   -- the refund is owed (or claimed until then); null once made
    found_at        timestamptz   NOT NULL,
    undone_at       timestamptz,
    CHECK ((undo_ref IS NULL) = (next_attempt_at IS NOT NULL))
);

CREATE INDEX surplus_charge_due_idx ON surplus_charge (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
