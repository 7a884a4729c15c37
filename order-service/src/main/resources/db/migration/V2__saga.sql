ALTER TABLE orders
    ADD COLUMN waiting_reason     varchar(512),
    ADD COLUMN waiting_since      timestamptz,
    ADD COLUMN stock_reserved     boolean NOT NULL DEFAULT false,
    ADD COLUMN paid               boolean NOT NULL DEFAULT false,
    ADD COLUMN shipment_created   boolean NOT NULL DEFAULT false,
    ADD COLUMN stock_released     boolean NOT NULL DEFAULT false,
    ADD COLUMN payment_refunded   boolean NOT NULL DEFAULT false,
    ADD COLUMN shipment_cancelled boolean NOT NULL DEFAULT false;

CREATE INDEX orders_waiting_idx ON orders (waiting_since) WHERE waiting_reason IS NOT NULL;

-- Every saga event of an order, from all four services: the order's own as it publishes them, the others'
-- as it consumes them. One call to the timeline shows the whole saga.
CREATE TABLE saga_event (
    seq            bigint       GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id       uuid         NOT NULL UNIQUE,
    order_id       uuid         NOT NULL,
    type           varchar(64)  NOT NULL,
    producer       varchar(32)  NOT NULL,
    occurred_at    timestamptz  NOT NULL,
    recorded_at    timestamptz  NOT NULL,
    correlation_id varchar(128) NOT NULL,
    causation_id   uuid,
    note           varchar(512)
);
CREATE INDEX saga_event_order_idx ON saga_event (order_id, occurred_at);

-- POST /orders with an Idempotency-Key: the same key and body give the same order.
CREATE TABLE idempotency_key (
    key          varchar(128) PRIMARY KEY,
    request_hash varchar(64)  NOT NULL,
    order_id     uuid         NOT NULL REFERENCES orders (id),
    created_at   timestamptz  NOT NULL
);

-- What operators did, by whom and when.
CREATE TABLE operator_action (
    id          bigint       GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    order_id    uuid         NOT NULL REFERENCES orders (id),
    action      varchar(32)  NOT NULL,
    operator    varchar(128) NOT NULL,
    at          timestamptz  NOT NULL,
    detail      varchar(512)
);
CREATE INDEX operator_action_order_idx ON operator_action (order_id);
