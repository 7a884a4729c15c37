-- One shipment per order. The carrier schedule (attempts, next_attempt_at) and the claim of a call under way
-- (claimed_until) live in the row: a restart neither loses nor resets them.
CREATE TABLE shipment (
    id                        uuid          PRIMARY KEY, -- also the idempotency key of the create call
    order_id                  uuid          NOT NULL UNIQUE,
    status                    varchar(32)   NOT NULL
        CHECK (status IN ('PENDING', 'REQUESTED', 'CREATED', 'REJECTED', 'ON_HOLD', 'CANCELLING', 'CANCELLED')),
    paid                      boolean       NOT NULL,
    cancel_requested          boolean       NOT NULL,
    creation_uncertain        boolean       NOT NULL, -- a create call may have gone through unseen
    ship_name                 varchar(256),           -- the address: null until OrderCreated was heard
    ship_line1                varchar(256),
    ship_line2                varchar(256),
    ship_city                 varchar(128),
    ship_postal_code          varchar(32),
    ship_country              varchar(64),
    attempts                  integer       NOT NULL CHECK (attempts >= 0),
    cancel_attempts           integer       NOT NULL CHECK (cancel_attempts >= 0),
    next_attempt_at           timestamptz,
    claimed_until             timestamptz,
    carrier_shipment_id       varchar(128),
    last_error                varchar(1000),
    correlation_id            varchar(128)  NOT NULL,
    caused_by_event_id        uuid,
    cancel_caused_by_event_id uuid,
    created_at                timestamptz   NOT NULL,
    updated_at                timestamptz   NOT NULL,
    version                   bigint        NOT NULL
);

-- The worker's sweep: rows with a carrier call due.
CREATE INDEX shipment_due_idx ON shipment (next_attempt_at) WHERE status IN ('REQUESTED', 'CANCELLING');
