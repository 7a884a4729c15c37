-- A live shipment the carrier created under a shipment's key that is not the one the shipment recorded: a second
-- parcel, which a carrier makes when it has forgotten the key and a create comes again under it (an operator's
-- retry-shipping long after a create that went through unseen). It is cancelled at the carrier (SurplusCancels,
-- dev.ordersaga.work.Surpluses), retried until the carrier takes it. One row per carrier shipment: the report's two
-- looks at an entry, and replicas reading the same page, find it once.
CREATE TABLE surplus_shipment (
    id              uuid          PRIMARY KEY,
    provider_ref    varchar(128)  NOT NULL UNIQUE, -- the carrier's id of the second shipment
    owner_id        uuid          NOT NULL REFERENCES shipment (id),
    order_id        uuid          NOT NULL,
    correlation_id  varchar(128)  NOT NULL,
    undo_ref        varchar(128),                  -- what the carrier answered the cancel
    attempts        integer       NOT NULL CHECK (attempts >= 0),
    next_attempt_at timestamptz,                   -- the cancel is owed (or claimed until then); null once made
    found_at        timestamptz   NOT NULL,
    undone_at       timestamptz,
    CHECK ((undo_ref IS NULL) = (next_attempt_at IS NOT NULL))
);

CREATE INDEX surplus_shipment_due_idx ON surplus_shipment (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
