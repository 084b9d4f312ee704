-- Where a first sync's index work goes (issue 33, "measure before choosing").
-- A million rows shaped like `record`'s (C-collated text keys, random
-- md5 record ids, five filter values, ~530-byte bodies), inserted into
-- tables in a scratch schema `exp`, in the ways a store could load them:
--   A  with `record`'s three unique indexes, rows in ordinal order (today's swap);
--   B  into a table without indexes, then the three indexes built;
--   C  with only the ordinal index;
--   D  with the three indexes, rows in record id order;
--   E  with only the primary key, rows in ordinal order.
-- Run: psql postgres://postgres@127.0.0.1:5432/test -f bench/experiments/index_load.sql
-- It drops the schema `exp` when done. Figures: BENCHMARKS.md.
\timing on
DROP SCHEMA IF EXISTS exp CASCADE;
CREATE SCHEMA exp;
CREATE UNLOGGED TABLE exp.s AS
SELECT gen_random_uuid() AS connection_id, 'invoices'::text AS data_type, 7::bigint AS generation,
       ('inv-' || md5(i::text)) COLLATE "C" AS record_id, gen_random_uuid() AS company_id,
       (to_char(date '2020-01-01' + (i % 2000), 'YYYY-MM-DD') || lpad(i::text, 8, '0')) COLLATE "C" AS sort_key,
       (ARRAY['Draft','Submitted','Paid','PartiallyPaid','Void'])[1 + i % 5] AS filter_value,
       repeat('{"id":"x","amount":123.45,"customerRef":{"id":"c"},"lines":[]}', 9) AS body,
       i::bigint AS ordinal, (i / 5 + 1)::bigint AS filter_ordinal
FROM generate_series(1, 1000000) i;
CREATE TABLE exp.r (connection_id uuid NOT NULL, data_type text NOT NULL, generation bigint NOT NULL,
  record_id text COLLATE "C" NOT NULL, company_id uuid NOT NULL, sort_key text COLLATE "C" NOT NULL,
  filter_value text COLLATE "C", body text NOT NULL, ordinal bigint NOT NULL, filter_ordinal bigint);
CREATE TABLE exp.r_a (LIKE exp.r);
ALTER TABLE exp.r_a ADD PRIMARY KEY (generation, record_id);
CREATE UNIQUE INDEX ON exp.r_a (generation, ordinal);
CREATE UNIQUE INDEX ON exp.r_a (generation, filter_value, filter_ordinal);
CREATE TABLE exp.r_b (LIKE exp.r);
CREATE TABLE exp.r_c (LIKE exp.r);
CREATE UNIQUE INDEX ON exp.r_c (generation, ordinal);
CREATE TABLE exp.r_d (LIKE exp.r_a INCLUDING INDEXES);
CREATE TABLE exp.r_e (LIKE exp.r);
ALTER TABLE exp.r_e ADD PRIMARY KEY (generation, record_id);
SELECT count(*) FROM exp.s;
CHECKPOINT;
\echo A: three indexes, ordinal order
INSERT INTO exp.r_a SELECT * FROM exp.s ORDER BY ordinal;
CHECKPOINT;
\echo B: no index, ordinal order
INSERT INTO exp.r_b SELECT * FROM exp.s ORDER BY ordinal;
\echo B: then the three indexes
ALTER TABLE exp.r_b ADD PRIMARY KEY (generation, record_id);
CREATE UNIQUE INDEX ON exp.r_b (generation, ordinal);
CREATE UNIQUE INDEX ON exp.r_b (generation, filter_value, filter_ordinal);
CHECKPOINT;
\echo C: the ordinal index only
INSERT INTO exp.r_c SELECT * FROM exp.s ORDER BY ordinal;
CHECKPOINT;
\echo D: three indexes, record id order
INSERT INTO exp.r_d SELECT * FROM exp.s ORDER BY record_id;
CHECKPOINT;
\echo E: the primary key only, ordinal order
INSERT INTO exp.r_e SELECT * FROM exp.s ORDER BY ordinal;
DROP SCHEMA exp CASCADE;
