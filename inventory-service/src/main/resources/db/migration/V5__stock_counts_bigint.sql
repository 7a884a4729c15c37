-- A SKU's counts grow with its life: shipped and stocked (units ever made available) only ever rise, and a SKU sold
-- by the million a week (a screw, a cable) passes 2^31 - 1 units within a few decades or sooner. Past it, integer
-- counts refused the OrderConfirmed that shipped the unit, which was parked, and every PUT that would have stocked
-- more. Bigint keeps them for good. One ALTER rewrites the table once; the CHECKs stay as they are.
ALTER TABLE stock
    ALTER COLUMN available TYPE bigint,
    ALTER COLUMN reserved TYPE bigint,
    ALTER COLUMN shipped TYPE bigint,
    ALTER COLUMN stocked TYPE bigint;
