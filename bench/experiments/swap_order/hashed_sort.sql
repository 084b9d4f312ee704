-- The swap before: numbered by id, joined back by hash, the rows sorted with their JSON.
TRUNCATE exq.r; CHECKPOINT;
BEGIN;
SET LOCAL work_mem='256MB'; SET LOCAL jit=off; SET LOCAL enable_mergejoin=off; SET LOCAL enable_nestloop=off;
EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) WITH numbered AS MATERIALIZED (
  SELECT s.record_id, row_number() OVER (ORDER BY s.sort_key DESC, s.record_id) AS ordinal,
         row_number() OVER (PARTITION BY s.filter_value ORDER BY s.sort_key DESC, s.record_id) AS filter_ordinal
  FROM exq.s s WHERE s.connection_id='11111111-1111-1111-1111-111111111111' AND s.data_type='invoices' AND s.generation=7)
INSERT INTO exq.r SELECT s.connection_id, s.data_type, s.generation, s.record_id, s.company_id, s.sort_key, s.filter_value,
  s.body || '"x"', n.ordinal, n.filter_ordinal
FROM exq.s s JOIN numbered n ON n.record_id = s.record_id
WHERE s.connection_id='11111111-1111-1111-1111-111111111111' AND s.data_type='invoices' AND s.generation=7
ORDER BY n.ordinal;
COMMIT;
