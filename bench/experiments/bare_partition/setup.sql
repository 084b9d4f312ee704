-- A million record-shaped rows to load (exp3.s), a partitioned record with a
-- shared partition, and today's shape (exp3.today, the three indexes kept).
DROP SCHEMA IF EXISTS exp3 CASCADE;
CREATE SCHEMA exp3;
CREATE UNLOGGED TABLE exp3.s AS
SELECT 9::bigint AS part, gen_random_uuid() AS connection_id, 'invoices'::text AS data_type, 7::bigint AS generation,
       ('inv-' || md5(i::text)) COLLATE "C" AS record_id, gen_random_uuid() AS company_id,
       (to_char(date '2020-01-01' + (i % 2000), 'YYYY-MM-DD') || lpad(i::text, 8, '0')) COLLATE "C" AS sort_key,
       (ARRAY['Draft','Submitted','Paid','PartiallyPaid','Void'])[1 + i % 5] COLLATE "C" AS filter_value,
       repeat('{"id":"x","amount":123.45,"customerRef":{"id":"c"},"lines":[]}', 9) AS body,
       i::bigint AS ordinal, (i / 5 + 1)::bigint AS filter_ordinal
FROM generate_series(1, 1000000) i;
CREATE TABLE exp3.record (LIKE exp3.s) PARTITION BY LIST (part);
CREATE TABLE exp3.record_0 PARTITION OF exp3.record FOR VALUES IN (0);
ALTER TABLE exp3.record_0 ADD PRIMARY KEY (generation, record_id);
CREATE UNIQUE INDEX ON exp3.record_0 (generation, ordinal);
CREATE UNIQUE INDEX ON exp3.record_0 (generation, filter_value, filter_ordinal);
INSERT INTO exp3.record_0 SELECT 0, connection_id, data_type, 100 + ordinal % 50, record_id, company_id, sort_key,
  filter_value, body, ordinal, filter_ordinal FROM exp3.s WHERE ordinal <= 200000;
CREATE TABLE exp3.today (LIKE exp3.s);
ALTER TABLE exp3.today ADD PRIMARY KEY (generation, record_id);
CREATE UNIQUE INDEX ON exp3.today (generation, ordinal);
CREATE UNIQUE INDEX ON exp3.today (generation, filter_value, filter_ordinal);
CREATE TABLE exp3.record_9 (LIKE exp3.s);
ALTER TABLE exp3.record_9 ADD CONSTRAINT own_part CHECK (part = 9);
VACUUM ANALYZE exp3.s;
CHECKPOINT;
