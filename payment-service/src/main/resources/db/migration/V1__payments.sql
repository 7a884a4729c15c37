-- The payment of each order and its state machine (domain/Payment). The payment id is the charge's idempotency key
-- at the provider ("refund-<id>" the refund's).
CREATE TABLE payment (
    id                 uuid          PRIMARY KEY,
    order_id           uuid          NOT NULL UNIQUE,
    status             varchar(32)   NOT NULL,
    amount             numeric(19,4),          -- null until OrderCreated is known (StockReserved may come first)
    currency           varchar(3),
    payment_token      varchar(255),           -- the provider's opaque token, never card data
    stock_reserved     boolean       NOT NULL,
    cancel_requested   boolean       NOT NULL,
    refund_answered    boolean       NOT NULL,
    provider_charge_id varchar(255),
    provider_refund_id varchar(255),
    decline_reason     varchar(255),
    attempts           integer       NOT NULL CHECK (attempts >= 0),
    next_attempt_at    timestamptz,            -- when a provider call is owed; null when none is
    correlation_id     varchar(128)  NOT NULL,
    caused_by_event_id uuid          NOT NULL, -- the event that started the current step
    created_at         timestamptz   NOT NULL,
    updated_at         timestamptz   NOT NULL,
    version            bigint        NOT NULL,
    CHECK (status IN ('PENDING', 'CHARGING', 'SUCCEEDED', 'DECLINED', 'REFUNDING', 'REFUNDED', 'CANCELLED')),
    CHECK (amount IS NOT NULL OR status IN ('PENDING', 'CANCELLED'))
);

-- the worker's sweep: due provider calls
CREATE INDEX payment_due_idx ON payment (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
