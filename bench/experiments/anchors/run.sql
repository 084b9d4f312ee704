-- Issue 33, docs/store-next.md step 4: can a layered publish find each
-- moved or new record's anchor (how many base rows come before it in the
-- list's order) without fences, by a binary search of the base's ordinals
-- through `record_ordinal`? All the records' searches advance together: one
-- UPDATE per round probes each unfinished search's middle ordinal (about
-- 20 rounds for a million rows). Timed for 1,000 and 20,000 records with
-- random keys against a million-row base, then checked against a count.
--
--   psql -X -v ON_ERROR_STOP=1 postgres://postgres@127.0.0.1:5432/test -f bench/experiments/anchors/run.sql
--
-- Everything is in the schema `exanc`, dropped at the end.
\timing on
DROP SCHEMA IF EXISTS exanc CASCADE;
CREATE SCHEMA exanc;
SET search_path = exanc;
SET jit = off;

\echo '--- the base: a million invoice-like rows (~600 bytes), numbered in (sort_key, record_id) order (not measured)'
CREATE TABLE record (generation bigint NOT NULL, ordinal bigint NOT NULL,
  record_id text COLLATE "C" NOT NULL, sort_key text COLLATE "C" NOT NULL, body text NOT NULL,
  PRIMARY KEY (generation, record_id), UNIQUE (generation, ordinal));
INSERT INTO record
SELECT 1, row_number() OVER (ORDER BY k, id), id, k, '{"note":"' || repeat(md5(id), 18) || '"}'
FROM (SELECT 'inv-' || md5(i::text) AS id,
             to_char(date '2021-01-01' + (hashint4(i) & 1023), 'YYYY-MM-DD') AS k
      FROM generate_series(1, 1000000) i) s;
VACUUM ANALYZE record;

-- The searches: each record's key, and the ordinals its anchor lies in.
CREATE TABLE search (n int PRIMARY KEY, sort_key text COLLATE "C", record_id text COLLATE "C",
                     lo bigint NOT NULL, hi bigint NOT NULL);

CREATE FUNCTION anchors(k int) RETURNS TABLE (rounds int, ms numeric) LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  moved int;
BEGIN
  TRUNCATE search;
  INSERT INTO search
    SELECT i, to_char(date '2021-01-01' + (hashint4(i * 7919 + k) & 1023), 'YYYY-MM-DD'),
           'new-' || md5((i + k)::text), 0, 1000000
    FROM generate_series(1, k) i;
  rounds := 0;
  LOOP
    -- Rows at or below `lo` come before the record, rows above `hi` after.
    UPDATE search s SET
      lo = CASE WHEN (r.sort_key, r.record_id) < (s.sort_key, s.record_id) THEN m.mid ELSE s.lo END,
      hi = CASE WHEN (r.sort_key, r.record_id) < (s.sort_key, s.record_id) THEN s.hi ELSE m.mid - 1 END
    FROM (SELECT n, (lo + hi + 1) / 2 AS mid FROM search WHERE lo < hi) m,
         LATERAL (SELECT sort_key, record_id FROM record
                  WHERE generation = 1 AND ordinal = m.mid OFFSET 0) r
    WHERE s.n = m.n;
    GET DIAGNOSTICS moved = ROW_COUNT;
    EXIT WHEN moved = 0;
    rounds := rounds + 1;
  END LOOP;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  RETURN NEXT;
END $$;

\echo '--- 1,000 records, three runs (ms)'
SELECT * FROM anchors(1000);
SELECT * FROM anchors(1000);
SELECT * FROM anchors(1000);
\echo '--- checked on 20 of them: each anchor is the count of base rows before the record (expect 0 wrong)'
SELECT count(*) AS wrong FROM search s
WHERE s.n <= 20 AND s.lo <> (SELECT count(*) FROM record r WHERE r.generation = 1
               AND (r.sort_key, r.record_id) < (s.sort_key, s.record_id));
\echo '--- 20,000 records, two runs (ms)'
SELECT * FROM anchors(20000);
SELECT * FROM anchors(20000);

DROP SCHEMA exanc CASCADE;
