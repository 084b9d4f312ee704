-- A million rows in a plain table, for run.sh (partitions: parts.sh).
DROP SCHEMA IF EXISTS expg CASCADE;
CREATE SCHEMA expg;
CREATE TABLE expg.plain (part bigint NOT NULL, generation bigint NOT NULL, record_id text COLLATE "C" NOT NULL, ordinal bigint NOT NULL, body text NOT NULL, PRIMARY KEY (generation, record_id));
INSERT INTO expg.plain SELECT 1, 7, 'inv-' || md5(i::text), i, repeat('{"id":"x","amount":123.45,"customerRef":{"id":"c"},"lines":[]}', 9) FROM generate_series(1, 1000000) i;
CREATE UNIQUE INDEX ON expg.plain (generation, ordinal);
VACUUM ANALYZE expg.plain;
