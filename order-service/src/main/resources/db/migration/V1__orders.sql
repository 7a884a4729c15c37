CREATE TABLE orders (
    id               uuid          PRIMARY KEY,
    customer_id      varchar(64)   NOT NULL,
    status           varchar(32)   NOT NULL,
    total            numeric(19,4) NOT NULL,
    currency         varchar(3)    NOT NULL,
    ship_name        varchar(128)  NOT NULL,
    ship_line1       varchar(128)  NOT NULL,
    ship_line2       varchar(128),
    ship_city        varchar(64)   NOT NULL,
    ship_postal_code varchar(16)   NOT NULL,
    ship_country     varchar(2)    NOT NULL,
    correlation_id   varchar(128)  NOT NULL,
    cancel_reason    varchar(512),
    created_at       timestamptz   NOT NULL,
    updated_at       timestamptz   NOT NULL,
    version          bigint        NOT NULL
);

CREATE TABLE order_item (
    order_id   uuid          NOT NULL REFERENCES orders (id),
    line_no    integer       NOT NULL,
    sku        varchar(64)   NOT NULL,
    quantity   integer       NOT NULL CHECK (quantity > 0),
    unit_price numeric(19,4) NOT NULL CHECK (unit_price >= 0),
    PRIMARY KEY (order_id, line_no)
);
