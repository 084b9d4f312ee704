-- Issue 33: what would a first sync's publish cost if each record's JSON were
-- written once? Today a long list is written twice: staged (unlogged), then
-- moved into `record` with its ordinals and three indexes (the swap's halves,
-- about 9 s of an 18-19 s first sync at a million invoices). The alternative
-- measured here keeps the rows where they are first written (a logged table
-- keyed by generation and id) and numbers only narrow positions
-- (ordinal, filter ordinal, id) in a second table; a page then joins its
-- positions to the rows.
--
--   psql -X -v ON_ERROR_STOP=1 postgres://postgres@127.0.0.1:5432/test -f bench/experiments/narrow_positions/run.sql
--
-- One statement per write, one backend (the product moves a long list in two
-- halves on two): compare A with B, not with the product's figures. The
-- source rows come in an order unrelated to the list's (random), the worst
-- case for B's page reads. Everything is in the schema `exnp`, dropped at
-- the end.
\timing on
DROP SCHEMA IF EXISTS exnp CASCADE;
CREATE SCHEMA exnp;
SET search_path = exnp;
SET work_mem = '256MB';
SET jit = off;

\echo '--- source: a million invoice-like rows (~600 bytes), in random order (not measured)'
CREATE UNLOGGED TABLE source AS
SELECT 'inv-' || lpad(i::text, 7, '0') COLLATE "C" AS record_id,
       to_char(date '2020-01-01' + (hashint4(i) & 2047), 'YYYY-MM-DD') COLLATE "C" AS sort_key,
       (ARRAY['Paid', 'Submitted', 'Void', 'PartiallyPaid'])[1 + (hashint4(i + 7) & 3)] COLLATE "C" AS filter_value,
       '{"invoiceId":"inv-' || lpad(i::text, 7, '0') || '","note":"' || repeat(md5(i::text), 16) || '",' AS body
FROM generate_series(1, 1000000) i
ORDER BY hashint4(i * 31);
VACUUM ANALYZE source;

\echo '--- A, today: staged unlogged, then moved with ordinals into a table with three unique indexes'
CREATE UNLOGGED TABLE staged_a (generation bigint NOT NULL, record_id text COLLATE "C" NOT NULL,
  sort_key text COLLATE "C" NOT NULL, filter_value text COLLATE "C", body text NOT NULL,
  PRIMARY KEY (generation, record_id));
CREATE TABLE record_a (generation bigint NOT NULL, record_id text COLLATE "C" NOT NULL,
  sort_key text COLLATE "C" NOT NULL, filter_value text COLLATE "C", body text NOT NULL,
  ordinal bigint NOT NULL, filter_ordinal bigint,
  PRIMARY KEY (generation, record_id), UNIQUE (generation, ordinal),
  UNIQUE (generation, filter_value, filter_ordinal));
\echo 'A1: staging write'
INSERT INTO staged_a SELECT 7, record_id, sort_key, filter_value, body FROM source;
\echo 'A2: the move, numbered, in list order'
WITH numbered AS MATERIALIZED (
  SELECT s.ctid AS staged_row,
         row_number() OVER (ORDER BY s.sort_key DESC, s.record_id) AS ordinal,
         row_number() OVER (PARTITION BY s.filter_value ORDER BY s.sort_key DESC, s.record_id) AS filter_ordinal
  FROM staged_a s WHERE s.generation = 7)
INSERT INTO record_a
SELECT s.generation, s.record_id, s.sort_key, s.filter_value, s.body || '"modifiedDate":"2026-12-01T00:00:00Z"}',
       n.ordinal, n.filter_ordinal
FROM (SELECT * FROM numbered ORDER BY ordinal) n,
     LATERAL (SELECT * FROM staged_a s WHERE s.ctid = n.staged_row OFFSET 0) s
ORDER BY n.ordinal;

\echo '--- B, written once: the rows kept where first written (logged), narrow positions numbered'
CREATE TABLE body_b (generation bigint NOT NULL, record_id text COLLATE "C" NOT NULL,
  sort_key text COLLATE "C" NOT NULL, filter_value text COLLATE "C", body text NOT NULL,
  PRIMARY KEY (generation, record_id));
CREATE TABLE position_b (generation bigint NOT NULL, ordinal bigint NOT NULL,
  filter_value text COLLATE "C", filter_ordinal bigint, record_id text COLLATE "C" NOT NULL,
  PRIMARY KEY (generation, ordinal), UNIQUE (generation, filter_value, filter_ordinal));
\echo 'B1: the one write of the JSON (stamped as it is written: a first sync knows its time)'
INSERT INTO body_b SELECT 7, record_id, sort_key, filter_value, body || '"modifiedDate":"2026-12-01T00:00:00Z"}' FROM source;
\echo 'B2: the positions, numbered'
INSERT INTO position_b
SELECT 7, row_number() OVER (ORDER BY sort_key DESC, record_id), filter_value,
       row_number() OVER (PARTITION BY filter_value ORDER BY sort_key DESC, record_id), record_id
FROM body_b WHERE generation = 7
ORDER BY 2;

\timing off
\echo '--- sizes'
SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) AS total
FROM pg_class WHERE relnamespace = 'exnp'::regnamespace AND relkind = 'r' ORDER BY relname;

\echo '--- a page of 100 at the top and at 900,000, A then B, cold to this backend, then again'
SELECT pg_stat_reset();
\timing on
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT body FROM record_a WHERE generation = 7 AND ordinal > 0 AND ordinal <= 100 ORDER BY ordinal;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT body FROM record_a WHERE generation = 7 AND ordinal > 900000 AND ordinal <= 900100 ORDER BY ordinal;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT b.body FROM position_b p
  JOIN LATERAL (SELECT body FROM body_b b WHERE b.generation = p.generation AND b.record_id = p.record_id) b ON true
WHERE p.generation = 7 AND p.ordinal > 0 AND p.ordinal <= 100 ORDER BY p.ordinal;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON)
SELECT b.body FROM position_b p
  JOIN LATERAL (SELECT body FROM body_b b WHERE b.generation = p.generation AND b.record_id = p.record_id) b ON true
WHERE p.generation = 7 AND p.ordinal > 900000 AND p.ordinal <= 900100 ORDER BY p.ordinal;
\timing off

DROP SCHEMA exnp CASCADE;
