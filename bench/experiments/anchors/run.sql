-- Issue 33, docs/store-next.md step 4: how can a layered publish find each
-- moved or new record's anchor (how many base rows come before it in the
-- list's order) in a million-row base?
--   A: without fences, by a binary search of the base's ordinals through
--      `record_ordinal`, all the records' searches advancing together: one
--      UPDATE per round probes each unfinished search's middle ordinal
--      (about 20 rounds for a million rows);
--   B: with fences (every 64th row's key), searched in SQL, then a count
--      over at most 63 ordinals;
--   C: the statement `store::layers::fences::anchors` sends (the fence
--      found in the process, then the count), checked against B;
--   D: the fences read as `store::layers::fences::write` reads them.
-- Timed for 1,000 and 20,000 records with random keys (B also 100,000).
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


-- B: fences. Every 64th base row's (sort_key, record_id, ordinal), as a full
-- publish would write them from the keys' stream. One statement finds every
-- record's anchor: the last fence at or below its key (an index probe of the
-- small fence table), then a count over at most 64 base ordinals after it.
\echo '--- B: the fences written (every 64th row; the product would gather them from the keys stream)'
CREATE TABLE fence (generation bigint NOT NULL, sort_key text COLLATE "C" NOT NULL,
  record_id text COLLATE "C" NOT NULL, ordinal bigint NOT NULL,
  PRIMARY KEY (generation, sort_key, record_id));
INSERT INTO fence SELECT generation, sort_key, record_id, ordinal FROM record
  WHERE generation = 1 AND ordinal % 64 = 1;
ANALYZE fence;

CREATE FUNCTION fenced(k int) RETURNS TABLE (placed bigint, ms numeric) LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
BEGIN
  TRUNCATE search;
  INSERT INTO search
    SELECT i, to_char(date '2021-01-01' + (hashint4(i * 7919 + k) & 1023), 'YYYY-MM-DD'),
           'new-' || md5((i + k)::text), 0, 0
    FROM generate_series(1, k) i;
  started := clock_timestamp();
  UPDATE search s SET lo = a.anchor, hi = a.anchor
  FROM (SELECT s.n, coalesce(f.ordinal - 1, 0) + coalesce(c.before, 0) AS anchor
        FROM search s
        LEFT JOIN LATERAL (SELECT ordinal FROM fence
                           WHERE generation = 1 AND (sort_key, record_id) <= (s.sort_key, s.record_id)
                           ORDER BY sort_key DESC, record_id DESC LIMIT 1) f ON true
        LEFT JOIN LATERAL (SELECT count(*) AS before FROM record r
                           WHERE r.generation = 1
                             AND r.ordinal BETWEEN coalesce(f.ordinal, 1) AND coalesce(f.ordinal, 1) + 63
                             AND (r.sort_key, r.record_id) < (s.sort_key, s.record_id)) c ON true) a
  WHERE s.n = a.n;
  GET DIAGNOSTICS placed = ROW_COUNT;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  RETURN NEXT;
END $$;

\echo '--- B: 1,000 records, three runs (ms)'
SELECT * FROM fenced(1000);
SELECT * FROM fenced(1000);
SELECT * FROM fenced(1000);
\echo '--- B: checked on 20 of them (expect 0 wrong)'
SELECT count(*) AS wrong FROM search s
WHERE s.n <= 20 AND s.lo <> (SELECT count(*) FROM record r WHERE r.generation = 1
               AND (r.sort_key, r.record_id) < (s.sort_key, s.record_id));
\echo '--- B: 20,000 records, two runs (ms)'
SELECT * FROM fenced(20000);
SELECT * FROM fenced(20000);
\echo '--- B: 100,000 records, one run (ms)'
SELECT * FROM fenced(100000);

-- C: the statement `store::layers::fences::anchors` sends, 1,000 places a
-- statement: a VALUES list (here literals, there parameters) and a counted
-- subquery per place; the fences' search happens in the process, so each
-- place arrives with its fence's ordinal (taken here from the fence table).
CREATE FUNCTION product_shape(k int) RETURNS TABLE (statements int, ms numeric) LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  batch text;
  counted bigint;
  checked bigint := 0;
BEGIN
  PERFORM fenced(k);  -- the searches, with their anchors as a check
  CREATE TEMP TABLE IF NOT EXISTS wanted (n int, fence bigint, sort_key text, record_id text);
  TRUNCATE wanted;
  INSERT INTO wanted
    SELECT s.n, f.ordinal, s.sort_key, s.record_id FROM search s,
      LATERAL (SELECT ordinal FROM fence WHERE generation = 1
               AND (sort_key, record_id) <= (s.sort_key, s.record_id)
               ORDER BY sort_key DESC, record_id DESC LIMIT 1) f;
  started := clock_timestamp();
  statements := 0;
  FOR batch IN
    SELECT string_agg(format('(%s, %s, %L, %L)', n, fence, sort_key, record_id), ', ')
    FROM (SELECT w.*, (row_number() OVER (ORDER BY n) - 1) / 1000 AS part FROM wanted w) p
    GROUP BY part
  LOOP
    EXECUTE 'WITH w(n, fence, sort_key, record_id) AS (VALUES ' || batch || ') '
         || 'SELECT sum(c) FROM (SELECT (SELECT count(*) FROM record r WHERE r.generation = 1 '
         || 'AND r.ordinal > w.fence AND r.ordinal < w.fence + 64 '
         || 'AND (r.sort_key < w.sort_key COLLATE "C" OR (r.sort_key = w.sort_key COLLATE "C" '
         || 'AND r.record_id < w.record_id COLLATE "C"))) AS c FROM w) counted'
      INTO counted;
    checked := checked + counted;
    statements := statements + 1;
  END LOOP;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  -- Each place's count plus its fence is its anchor, as B found it.
  IF checked <> (SELECT sum(s.lo - w.fence) FROM search s JOIN wanted w USING (n)) THEN
    RAISE EXCEPTION 'the counts do not give B''s anchors';
  END IF;
  RETURN NEXT;
END $$;

\echo '--- C: the product statement, 1,000 places, three runs (ms)'
SELECT * FROM product_shape(1000);
SELECT * FROM product_shape(1000);
SELECT * FROM product_shape(1000);
\echo '--- C: 20,000 places (20 statements), two runs (ms)'
SELECT * FROM product_shape(20000);
SELECT * FROM product_shape(20000);
\echo '--- C: the plan of one statement (expect an index scan of the ordinals per place)'
EXPLAIN (COSTS OFF) WITH w(n, fence, sort_key, record_id) AS (VALUES (1, 65::bigint, '2021-05-05', 'x'), (2, 129::bigint, '2021-06-06', 'y'))
SELECT (SELECT count(*) FROM record r WHERE r.generation = 1 AND r.ordinal > w.fence AND r.ordinal < w.fence + 64
        AND (r.sort_key < w.sort_key COLLATE "C" OR (r.sort_key = w.sort_key COLLATE "C" AND r.record_id < w.record_id COLLATE "C"))) FROM w;

-- D: the fences as `store::layers::fences::write` reads them: 16
-- statements, each 1,024 ordinals looked up one by one
-- (`store::lookups::each_looked_up`: `VALUES … LATERAL … OFFSET 0`).
CREATE FUNCTION fences_read() RETURNS TABLE (statements int, fences bigint, ms numeric) LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
  wanted text;
  found bigint;
BEGIN
  statements := 0;
  fences := 0;
  FOR wanted IN
    SELECT string_agg('(' || o || '::bigint)', ', ') FROM generate_series(1, 1000000, 64) o
    GROUP BY (o - 1) / (64 * 1024)
  LOOP
    EXECUTE 'SELECT count(*) FROM (SELECT r.* FROM (VALUES ' || wanted || ') AS w(wanted), '
         || 'LATERAL (SELECT ordinal, sort_key, record_id FROM record '
         || 'WHERE generation = 1 AND ordinal = w.wanted OFFSET 0) r) f' INTO found;
    fences := fences + found;
    statements := statements + 1;
  END LOOP;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  RETURN NEXT;
END $$;

\echo '--- D: the fences read by ordinal, three runs (ms)'
SELECT * FROM fences_read();
SELECT * FROM fences_read();
SELECT * FROM fences_read();

DROP SCHEMA exanc CASCADE;
