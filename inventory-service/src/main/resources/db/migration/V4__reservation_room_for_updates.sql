-- A reservation's row is updated when its order is confirmed or cancelled, soon after its insert. The update changes
-- no indexed column, so it could be heap-only (no new index entries) if the new version fit on the row's page; with
-- pages filled to the brim by the next reservations, 68 % did not fit (pg_stat_user_tables over the benchmark's runs)
-- and wrote new entries into both of the table's unique indexes. New pages keep a fifth free.
ALTER TABLE reservation SET (fillfactor = 80);
