-- Issue 33, docs/store-next.md step 0 H: what does a page cost when a
-- generation is a base plus a delta, read through segments? A layered
-- generation G stores only its changed rows (under its own number, densely
-- numbered in list order) and a segment table mapping G's positions 1..N to
-- runs of the base's ordinals or the delta's. A page of G reads the segments
-- meeting its range, then each segment's rows by ordinal range. Measured
-- here against today's page (one ordinal range of one generation), at three
-- depths, for k = 1,000 and 20,000 changed records spread at random.
--
--   psql -X -v ON_ERROR_STOP=1 postgres://postgres@127.0.0.1:5432/test -f bench/experiments/segments/run.sql
--
-- Everything is in the schema `exseg`, dropped at the end. Each figure is
-- the mean of 2,000 executions of a plan-cached statement at random offsets
-- within 1,000 rows of the depth named, from a plpgsql loop (no network, no
-- JSON to the client: compare the two reads with each other, not with an
-- API page's 2-5 ms).
\timing on
DROP SCHEMA IF EXISTS exseg CASCADE;
CREATE SCHEMA exseg;
SET search_path = exseg;
SET jit = off;

\echo '--- the base: a million invoice-like rows (~600 bytes) under generation 1, numbered 1..N (not measured)'
CREATE TABLE record (generation bigint NOT NULL, ordinal bigint NOT NULL,
  record_id text COLLATE "C" NOT NULL, body text NOT NULL,
  PRIMARY KEY (generation, record_id), UNIQUE (generation, ordinal));
INSERT INTO record
SELECT 1, i, 'inv-' || lpad(i::text, 7, '0'),
       '{"invoiceId":"inv-' || lpad(i::text, 7, '0') || '","note":"' || repeat(md5(i::text), 16) || '"}'
FROM generate_series(1, 1000000) i;

CREATE TABLE segment (generation bigint NOT NULL, position bigint NOT NULL,
  source bigint NOT NULL, source_position bigint NOT NULL, length bigint NOT NULL,
  PRIMARY KEY (generation, position));

-- Layered generation `g` over the base: `k` records changed in place, at
-- random ordinals; its delta rows under `g`, numbered 1..k in list order;
-- its segments: each changed record a one-row run of the delta, the runs
-- of the base between them.
CREATE FUNCTION layer(g bigint, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  CREATE TEMP TABLE changed ON COMMIT DROP AS
    SELECT ordinal FROM generate_series(1, 1000000) ordinal ORDER BY hashint8(ordinal * g) LIMIT k;
  INSERT INTO record
    SELECT g, row_number() OVER (ORDER BY c.ordinal), b.record_id, b.body || ' '
    FROM changed c JOIN record b ON b.generation = 1 AND b.ordinal = c.ordinal;
  WITH c AS (SELECT ordinal, row_number() OVER (ORDER BY ordinal) AS d,
                    lag(ordinal, 1, 0::bigint) OVER (ORDER BY ordinal) AS prev FROM changed)
  INSERT INTO segment
    SELECT g, ordinal, g, d, 1 FROM c
    UNION ALL SELECT g, prev + 1, 1, prev + 1, ordinal - prev - 1 FROM c WHERE ordinal - prev > 1
    UNION ALL SELECT g, last + 1, 1, last + 1, 1000000 - last FROM (SELECT max(ordinal) AS last FROM changed) m
              WHERE last < 1000000;
  DROP TABLE changed;
END $$;
BEGIN; SELECT layer(2, 1000); COMMIT;
BEGIN; SELECT layer(3, 20000); COMMIT;
VACUUM ANALYZE record;
VACUUM ANALYZE segment;
SELECT generation, count(*) AS segments, sum(length) AS positions FROM segment GROUP BY generation ORDER BY 1;

-- Today's page: one ordinal range.
CREATE FUNCTION page_today(after bigint, size bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT sum(length(body)) FROM (
    SELECT body FROM record WHERE generation = 1 AND ordinal > after AND ordinal <= after + size
    ORDER BY ordinal) p
$$;

-- A layered page: the segments meeting (after, after + size], from the last
-- one starting at or before after + 1, then each one's slice of its source,
-- in the page's order.
CREATE FUNCTION layered_page(g bigint, after bigint, size bigint)
RETURNS TABLE (record_id text, body text) LANGUAGE sql STABLE AS $$
  SELECT r.record_id, r.body FROM (
    SELECT * FROM segment
    WHERE generation = g AND position <= after + size
      AND position >= (SELECT position FROM segment WHERE generation = g AND position <= after + 1
                       ORDER BY position DESC LIMIT 1)
    ORDER BY position) s,
  LATERAL (
    SELECT record_id, body, ordinal FROM record
    WHERE generation = s.source
      AND ordinal >= s.source_position + greatest(0, after + 1 - s.position)
      AND ordinal <= s.source_position + least(s.length - 1, after + size - s.position)
    ORDER BY ordinal) r
  ORDER BY s.position, r.ordinal
$$;
CREATE FUNCTION page_layered(g bigint, after bigint, size bigint) RETURNS bigint LANGUAGE sql STABLE AS $$
  SELECT sum(length(body)) FROM layered_page(g, after, size)
$$;

\echo '--- check: a layered page names the base page''s records, in order (expect 6 rows of true)'
SELECT g, after,
       (SELECT array_agg(record_id) FROM layered_page(g, after, 100))
       = (SELECT array_agg(record_id ORDER BY ordinal) FROM record
          WHERE generation = 1 AND ordinal > after AND ordinal <= after + 100) AS same_records
FROM (VALUES (2::bigint), (3)) gs(g), (VALUES (0::bigint), (500000), (999900)) a(after);

CREATE FUNCTION mean_ms(g bigint, depth bigint, runs int) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  total bigint := 0;
  after bigint;
BEGIN
  started := clock_timestamp();
  FOR i IN 1..runs LOOP
    after := least(depth + (hashint4(i) & 1023) % 1000, 999900);
    IF g = 1 THEN
      total := total + page_today(after, 100);
    ELSE
      total := total + page_layered(g, after, 100);
    END IF;
  END LOOP;
  RETURN round((extract(epoch FROM clock_timestamp() - started) * 1000 / runs)::numeric, 4);
END $$;

\timing off
\echo '--- mean ms per page of 100 (2,000 runs each, after one warming pass)'
SELECT count(mean_ms(g, depth, 200)) AS warmed
FROM (VALUES (1::bigint), (2), (3)) gs(g), (VALUES (0::bigint), (500000), (998900)) d(depth);
SELECT CASE g WHEN 1 THEN 'today (one range)' WHEN 2 THEN 'layered, k = 1,000' ELSE 'layered, k = 20,000' END AS read,
       mean_ms(g, 0, 2000) AS "at the top",
       mean_ms(g, 500000, 2000) AS "at 500,000",
       mean_ms(g, 998900, 2000) AS "at 999,000"
FROM (VALUES (1::bigint), (2), (3)) gs(g) ORDER BY g;

\echo '--- one page''s plan and buffers at 500,000, k = 20,000'
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT body FROM layered_page(3, 500000, 100);

-- The product's statement (`store::layers::pages::statement`, fifth
-- session): the process computes the page's runs from its in-memory map and
-- sends them as a VALUES list, each run its own LATERAL range (OFFSET 0);
-- each page's text differs, so each is parsed and planned. (Joined to
-- `record` instead, this table's statistics made PostgreSQL hash the runs
-- and scan the table: 0.9 s a page.) Its runs are computed here beforehand from
-- the segment table (not timed), and both reads go through EXECUTE, so the
-- comparison includes planning for each.
CREATE TABLE page_runs (g bigint, i int, after bigint, runs text, PRIMARY KEY (g, i));
CREATE FUNCTION prepare_runs(g bigint, depth bigint, runs int) RETURNS void LANGUAGE sql AS $$
  DELETE FROM page_runs WHERE page_runs.g = prepare_runs.g;
  INSERT INTO page_runs
  SELECT prepare_runs.g, i, a.after,
         (SELECT string_agg(format('(%s, %s, %s, %s)', n, src, first, last), ', ' ORDER BY n) FROM (
            SELECT row_number() OVER (ORDER BY s.position) AS n, s.source AS src,
                   s.source_position + greatest(0, a.after + 1 - s.position) AS first,
                   s.source_position + least(s.length - 1, a.after + 100 - s.position) AS last
            FROM segment s WHERE s.generation = prepare_runs.g AND s.position <= a.after + 100
              AND s.position >= (SELECT position FROM segment WHERE generation = prepare_runs.g
                                 AND position <= a.after + 1 ORDER BY position DESC LIMIT 1)) r)
  FROM generate_series(1, runs) i,
       LATERAL (SELECT least(depth + (hashint4(i) & 1023) % 1000, 999900) AS after) a;
$$;
CREATE FUNCTION mean_ms_executed(g bigint, depth bigint, runs int) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  total bigint := 0;
  part bigint;
  page record;
BEGIN
  IF g <> 1 THEN
    PERFORM prepare_runs(g, depth, runs);
  END IF;
  started := clock_timestamp();
  IF g = 1 THEN
    FOR i IN 1..runs LOOP
      EXECUTE 'SELECT sum(length(body)) FROM (SELECT body FROM record WHERE generation = 1 AND ordinal > '
           || least(depth + (hashint4(i) & 1023) % 1000, 999900) || ' AND ordinal <= '
           || least(depth + (hashint4(i) & 1023) % 1000, 999900) + 100 || ' ORDER BY ordinal) p' INTO part;
      total := total + part;
    END LOOP;
  ELSE
    FOR page IN SELECT * FROM page_runs WHERE page_runs.g = mean_ms_executed.g ORDER BY i LOOP
      EXECUTE 'SELECT sum(length(body)) FROM (SELECT r.body FROM (VALUES ' || page.runs
           || ') AS s(run, generation, first, last), LATERAL (SELECT body, ordinal FROM record '
           || 'WHERE generation = s.generation AND ordinal BETWEEN s.first AND s.last '
           || 'ORDER BY ordinal OFFSET 0) r ORDER BY s.run, r.ordinal) p' INTO part;
      total := total + part;
    END LOOP;
  END IF;
  RETURN round((extract(epoch FROM clock_timestamp() - started) * 1000 / runs)::numeric, 4);
END $$;

\echo '--- check: the product statement names the base page''s records, in order (raises otherwise)'
DO $$
DECLARE
  same int := 0;
  found text[];
  wanted text[];
  page record;
BEGIN
  FOR page IN SELECT * FROM (VALUES (2::bigint), (3)) gs(g), (VALUES (0::bigint), (500000), (998900)) d(depth) LOOP
    PERFORM prepare_runs(page.g, page.depth, 1);
    EXECUTE 'SELECT array_agg(record_id) FROM (SELECT r.record_id FROM (VALUES '
         || (SELECT runs FROM page_runs WHERE g = page.g AND i = 1)
         || ') AS s(run, generation, first, last), LATERAL (SELECT record_id, ordinal FROM record '
         || 'WHERE generation = s.generation AND ordinal BETWEEN s.first AND s.last '
         || 'ORDER BY ordinal OFFSET 0) r ORDER BY s.run, r.ordinal) p' INTO found;
    SELECT array_agg(record_id ORDER BY ordinal) INTO wanted FROM record
    WHERE generation = 1 AND ordinal > (SELECT after FROM page_runs WHERE g = page.g AND i = 1)
      AND ordinal <= (SELECT after FROM page_runs WHERE g = page.g AND i = 1) + 100;
    IF found IS DISTINCT FROM wanted THEN
      RAISE EXCEPTION 'generation %, depth %: not the base page', page.g, page.depth;
    END IF;
    same := same + 1;
  END LOOP;
  RAISE NOTICE '% of 6 pages the same', same;
END $$;
\echo '--- mean ms per page of 100 through EXECUTE, planned each time (2,000 runs each, after one warming pass)'
SELECT count(mean_ms_executed(g, depth, 200)) AS warmed
FROM (VALUES (1::bigint), (2), (3)) gs(g), (VALUES (0::bigint), (500000), (998900)) d(depth);
SELECT CASE g WHEN 1 THEN 'today (one range), executed' WHEN 2 THEN 'product statement, k = 1,000'
              ELSE 'product statement, k = 20,000' END AS read,
       mean_ms_executed(g, 0, 2000) AS "at the top",
       mean_ms_executed(g, 500000, 2000) AS "at 500,000",
       mean_ms_executed(g, 998900, 2000) AS "at 999,000"
FROM (VALUES (1::bigint), (2), (3)) gs(g) ORDER BY g;
\echo '--- one product page''s plan at 500,000, k = 20,000'
SELECT prepare_runs(3, 500000, 1);
DO $$
DECLARE line text; runs text;
BEGIN
  SELECT page_runs.runs INTO runs FROM page_runs WHERE g = 3 AND i = 1;
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) SELECT r.body FROM (VALUES '
      || runs || ') AS s(run, generation, first, last), LATERAL (SELECT body, ordinal FROM record '
      || 'WHERE generation = s.generation AND ordinal BETWEEN s.first AND s.last '
      || 'ORDER BY ordinal OFFSET 0) r ORDER BY s.run, r.ordinal' LOOP
    RAISE NOTICE '%', line;
  END LOOP;
END $$;

DROP SCHEMA exseg CASCADE;
