-- An order's row is updated three times within a second of its insert (each step of its saga). None of those updates
-- changes an indexed column, so each could be a heap-only update (no new index entry) if the new version fit on the
-- row's page; with pages filled to the brim by the next orders' inserts, 41 % did not fit (pg_stat_user_tables over
-- the benchmark's runs) and wrote a new entry into the primary key's index instead. New pages keep a fifth free.
ALTER TABLE orders SET (fillfactor = 80);
