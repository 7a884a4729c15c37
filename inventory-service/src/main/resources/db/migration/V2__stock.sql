-- Stock per SKU. Units move available -> reserved -> shipped (or back to available); no count is ever negative,
-- whatever the code does: the CHECKs hold it.
CREATE TABLE stock (
    sku       varchar(64) PRIMARY KEY,
    available integer     NOT NULL CONSTRAINT stock_available_not_negative CHECK (available >= 0),
    reserved  integer     NOT NULL CONSTRAINT stock_reserved_not_negative CHECK (reserved >= 0),
    shipped   integer     NOT NULL CONSTRAINT stock_shipped_not_negative CHECK (shipped >= 0)
);

-- One reservation per order, all lines or none. FAILED rows exist so that a later OrderCancelling is answered;
-- RELEASED rows without items answer a cancel that came before any reservation.
CREATE TABLE reservation (
    order_id       uuid         PRIMARY KEY,
    reservation_id uuid         NOT NULL UNIQUE,
    status         varchar(16)  NOT NULL
        CONSTRAINT reservation_status_known CHECK (status IN ('RESERVED', 'FAILED', 'RELEASED', 'CONSUMED')),
    failure_reason varchar(512),
    correlation_id varchar(128) NOT NULL,
    created_at     timestamptz  NOT NULL,
    updated_at     timestamptz  NOT NULL,
    version        bigint       NOT NULL
);

-- What a reservation holds: one row per SKU.
CREATE TABLE reservation_item (
    order_id uuid        NOT NULL REFERENCES reservation (order_id),
    line_no  integer     NOT NULL,
    sku      varchar(64) NOT NULL,
    quantity integer     NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_id, line_no)
);
