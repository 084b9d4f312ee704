-- A million rows shaped like `record_staging` (C-collated keys, md5 record ids, dates in random
-- order, five filter values, 558-byte bodies) in a scratch schema `exq`, and an empty `record`-shaped
-- table with its three unique indexes. Used by run.sh.
\timing on
DROP SCHEMA IF EXISTS exq CASCADE;
CREATE SCHEMA exq;
CREATE UNLOGGED TABLE exq.s (connection_id uuid NOT NULL, data_type varchar(32) NOT NULL, generation bigint NOT NULL,
  record_id varchar(256) COLLATE "C" NOT NULL, company_id uuid NOT NULL, sort_key text COLLATE "C" NOT NULL,
  filter_value varchar(64), body text NOT NULL,
  PRIMARY KEY (connection_id, data_type, generation, record_id));
INSERT INTO exq.s
SELECT '11111111-1111-1111-1111-111111111111'::uuid, 'invoices', 7,
       ('inv-' || md5(i::text)), '22222222-2222-2222-2222-222222222222'::uuid,
       (to_char(date '2020-01-01' + (hashint4(i) % 2000), 'YYYY-MM-DD') || lpad(i::text, 8, '0')),
       (ARRAY['Draft','Submitted','Paid','PartiallyPaid','Void'])[1 + i % 5],
       repeat('{"id":"x","amount":123.45,"customerRef":{"id":"c"},"lines":[]}', 9)
FROM generate_series(1, 1000000) i;
CREATE TABLE exq.r (connection_id uuid NOT NULL, data_type varchar(32) NOT NULL, generation bigint NOT NULL,
  record_id varchar(256) COLLATE "C" NOT NULL, company_id uuid NOT NULL, sort_key text COLLATE "C" NOT NULL,
  filter_value varchar(64), body text NOT NULL, ordinal bigint NOT NULL, filter_ordinal bigint,
  PRIMARY KEY (generation, record_id));
CREATE UNIQUE INDEX ON exq.r (generation, ordinal);
CREATE UNIQUE INDEX ON exq.r (generation, filter_value, filter_ordinal);
VACUUM ANALYZE exq.s;
