-- Would compressing record bodies inline cut the swap's insert (heap and WAL bytes) enough to pay for it?
-- (issue 33, BENCHMARKS.md "Bodies compressed inline: an experiment"). A million record-shaped rows whose
-- bodies are invoice-like JSON (repeated keys, random md5 values, ~600 bytes), inserted in ordinal order into
-- a table with record's three unique indexes, two ways:
--   plain: the body as today (not compressed: under the 2 kB TOAST threshold);
--   lz4:   `body` with COMPRESSION lz4 and STORAGE MAIN, and toast_tuple_target = 128, so each body is
--          compressed inside its row.
-- Then a page of 100 rows read by ordinal from each, 200 times. Scratch schema `exz`, dropped at the end.
-- Run: psql -X -v ON_ERROR_STOP=1 postgres://postgres@127.0.0.1:5432/test -f bench/experiments/inline_compression/run.sql
\timing on
DROP SCHEMA IF EXISTS exz CASCADE;
CREATE SCHEMA exz;
CREATE UNLOGGED TABLE exz.s AS
SELECT 7::bigint AS generation, ('inv-' || md5(i::text)) COLLATE "C" AS record_id,
       (ARRAY['Draft','Submitted','Paid','PartiallyPaid','Void'])[1 + i % 5] AS filter_value,
       json_build_object(
         'id', 'inv-' || md5(i::text), 'invoiceNumber', 'INV-' || lpad(i::text, 7, '0'),
         'customerRef', json_build_object('id', 'cus-' || (i % 5000), 'companyName', 'Customer ' || md5((i % 5000)::text)),
         'issueDate', to_char(date '2020-01-01' + (hashint4(i) & 2047), 'YYYY-MM-DD'),
         'dueDate', to_char(date '2020-01-31' + (hashint4(i) & 2047), 'YYYY-MM-DD'),
         'currency', (ARRAY['EUR','GBP','USD'])[1 + i % 3], 'subTotal', ((hashint4(i) & 65535) / 7.0)::numeric(12,2),
         'totalAmount', ((hashint4(i) & 65535) / 6.0)::numeric(12,2), 'status', (ARRAY['Draft','Submitted','Paid','PartiallyPaid','Void'])[1 + i % 5],
         'lineItems', json_build_array(
            json_build_object('description', 'Item ' || substr(md5((i * 3)::text), 1, 12), 'unitAmount', (i % 997) / 3.0, 'quantity', i % 9,
                              'accountRef', json_build_object('id', 'gl-4000', 'name', 'Sales')),
            json_build_object('description', 'Item ' || substr(md5((i * 7)::text), 1, 12), 'unitAmount', (i % 991) / 3.0, 'quantity', i % 7,
                              'accountRef', json_build_object('id', 'gl-4000', 'name', 'Sales'))),
         'note', NULL, 'isDeleted', false)::text AS body,
       i::bigint AS ordinal, (i / 5 + 1)::bigint AS filter_ordinal
FROM generate_series(1, 1000000) i;
SELECT avg(octet_length(body))::int AS body_bytes FROM exz.s;
CREATE TABLE exz.plain (generation bigint NOT NULL, record_id text COLLATE "C" NOT NULL, filter_value text,
  body text NOT NULL, ordinal bigint NOT NULL, filter_ordinal bigint, PRIMARY KEY (generation, record_id));
CREATE UNIQUE INDEX ON exz.plain (generation, ordinal);
CREATE UNIQUE INDEX ON exz.plain (generation, filter_value, filter_ordinal);
CREATE TABLE exz.lz4 (LIKE exz.plain INCLUDING INDEXES);
ALTER TABLE exz.lz4 ALTER COLUMN body SET COMPRESSION lz4, ALTER COLUMN body SET STORAGE MAIN;
ALTER TABLE exz.lz4 SET (toast_tuple_target = 128);
CHECKPOINT;
SELECT pg_current_wal_lsn() AS before_plain \gset
\echo plain: insert
INSERT INTO exz.plain SELECT * FROM exz.s ORDER BY ordinal;
SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), :'before_plain')) AS wal_plain,
       pg_size_pretty(pg_table_size('exz.plain')) AS heap_plain;
CHECKPOINT;
SELECT pg_current_wal_lsn() AS before_lz4 \gset
\echo lz4: insert
INSERT INTO exz.lz4 SELECT * FROM exz.s ORDER BY ordinal;
SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), :'before_lz4')) AS wal_lz4,
       pg_size_pretty(pg_table_size('exz.lz4')) AS heap_lz4;
\timing off
\echo pages of 100 rows by ordinal, 200 each (ms in all)
DO $$
DECLARE started timestamptz; page int; total bigint;
BEGIN
  FOREACH page IN ARRAY ARRAY[0, 1] LOOP
    started := clock_timestamp();
    FOR k IN 0..199 LOOP
      IF page = 0 THEN
        SELECT sum(octet_length(body)) INTO total FROM exz.plain WHERE generation = 7 AND ordinal BETWEEN k * 4999 + 1 AND k * 4999 + 100;
      ELSE
        SELECT sum(octet_length(body)) INTO total FROM exz.lz4 WHERE generation = 7 AND ordinal BETWEEN k * 4999 + 1 AND k * 4999 + 100;
      END IF;
    END LOOP;
    RAISE NOTICE '%: % ms', CASE page WHEN 0 THEN 'plain' ELSE 'lz4' END,
      round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  END LOOP;
END $$;
DROP SCHEMA exz CASCADE;
