-- Eventing tables every service has. Their versions (V0_x) are independent of the service's own migrations
-- (V1, V2, ...): services run Flyway with out-of-order allowed, so either side can add a migration.

-- Transactional outbox. Rows are deleted in the transaction that inserts them: the CDC relay reads the inserts
-- from the write-ahead log (the publication carries inserts only), so the table stays empty.
CREATE TABLE outbox (
    id             uuid         PRIMARY KEY,
    aggregate_type varchar(64)  NOT NULL, -- the topic, routed by Debezium's EventRouter
    aggregate_id   varchar(64)  NOT NULL, -- the order id, the Kafka key
    type           varchar(64)  NOT NULL,
    payload        text         NOT NULL, -- the JSON envelope
    correlation_id varchar(128) NOT NULL,
    causation_id   varchar(64),
    occurred_at    timestamptz  NOT NULL
);

-- Ids of the events this service has applied, claimed in the handler's transaction.
CREATE TABLE inbox (
    event_id       uuid         PRIMARY KEY,
    event_type     varchar(64)  NOT NULL,
    topic          varchar(128) NOT NULL,
    order_id       uuid         NOT NULL,
    correlation_id varchar(128) NOT NULL,
    received_at    timestamptz  NOT NULL DEFAULT now()
);
CREATE INDEX inbox_received_at_idx ON inbox (received_at);

-- Offsets of the embedded Debezium engine (the layout of Debezium's JdbcOffsetBackingStore).
CREATE TABLE cdc_offset (
    id                varchar(36)   NOT NULL PRIMARY KEY,
    offset_key        varchar(1255),
    offset_val        varchar(1255),
    record_insert_ts  timestamp     NOT NULL,
    record_insert_seq integer       NOT NULL
);
