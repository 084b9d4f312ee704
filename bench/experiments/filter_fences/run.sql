-- Issue 33, docs/store-next.md step 4: a layer's map per filter value at a
-- million rows. What do the statements `store::layers::filtered` sends cost?
--   E: each filter value and its count, by a skip through the filter
--      ordinal index (`value_counts`);
--   F: the filter fences read (every 64th row of each value, its ordinal
--      in the whole list), 1,000 probes a statement (`fences_looked_up`);
--   G: filter anchors (`filtered::anchors`): for each record, its value's
--      rows among the base's first `a` rows, counted over at most 63
--      filter ordinals after the value's last fence at or before `a`
--      (found in the process; here from a table), checked against a count.
-- Two lists of a million rows: one filtered by six statuses (skewed, as
-- invoices are), one by 10,000 customers (as payments are).
--
--   psql -X -v ON_ERROR_STOP=1 postgres://postgres@127.0.0.1:5432/test -f bench/experiments/filter_fences/run.sql
--
-- Everything is in the schema `exfil`, dropped at the end.
\timing on
DROP SCHEMA IF EXISTS exfil CASCADE;
CREATE SCHEMA exfil;
SET search_path = exfil;
SET jit = off;

\echo '--- the bases: a million invoice-like rows each (~600 bytes), numbered as the product numbers them (not measured)'
CREATE TABLE record (generation bigint NOT NULL, ordinal bigint NOT NULL,
  record_id text COLLATE "C" NOT NULL, sort_key text COLLATE "C" NOT NULL,
  filter_value text COLLATE "C", filter_ordinal bigint, body text NOT NULL,
  PRIMARY KEY (generation, record_id), UNIQUE (generation, ordinal),
  UNIQUE (generation, filter_value, filter_ordinal));
-- Generation 1: six statuses, from 60% to 0.5% of the rows.
-- Generation 2: 10,000 customers, evenly.
INSERT INTO record
SELECT g, row_number() OVER (PARTITION BY g ORDER BY k, id), id, k, v,
       row_number() OVER (PARTITION BY g, v ORDER BY k, id),
       '{"note":"' || repeat(md5(id), 18) || '"}'
FROM (SELECT g, 'inv-' || md5(i::text) AS id,
             to_char(date '2021-01-01' + (hashint4(i) & 1023), 'YYYY-MM-DD') AS k,
             CASE WHEN g = 2 THEN 'customer-' || (hashint4(i * 31) & 16383) % 10000
                  ELSE (ARRAY['Paid','Paid','Paid','Paid','Paid','Paid','Submitted','Submitted',
                              'PartiallyPaid','Draft','Void','Unknown'])[1 + (hashint4(i * 17) & 2047) % 12]
             END AS v
      FROM generate_series(1, 1000000) i, (VALUES (1), (2)) gs(g)) s;
VACUUM ANALYZE record;

-- E: the product's statement, as `value_counts` sends it.
CREATE FUNCTION value_counts(g bigint) RETURNS TABLE (values_found bigint, rows_counted numeric, ms numeric)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz := clock_timestamp();
BEGIN
  SELECT count(*), sum(c.count) INTO values_found, rows_counted FROM (
    WITH RECURSIVE v(value) AS (
      SELECT (SELECT filter_value FROM record WHERE generation = g
              AND filter_value IS NOT NULL ORDER BY filter_value LIMIT 1)
      UNION ALL
      SELECT (SELECT r.filter_value FROM record r WHERE r.generation = g
              AND r.filter_value > v.value ORDER BY r.filter_value LIMIT 1)
      FROM v WHERE v.value IS NOT NULL)
    SELECT v.value AS value,
           (SELECT r.filter_ordinal FROM record r WHERE r.generation = g
            AND r.filter_value = v.value ORDER BY r.filter_ordinal DESC LIMIT 1) AS count
    FROM v WHERE v.value IS NOT NULL) c;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  RETURN NEXT;
END $$;

\echo '--- E: values and counts, statuses, three runs (expect 6 values, 1000000 rows)'
SELECT * FROM value_counts(1);
SELECT * FROM value_counts(1);
SELECT * FROM value_counts(1);
\echo '--- E: values and counts, customers, three runs (expect 10000 values, 1000000 rows)'
SELECT * FROM value_counts(2);
SELECT * FROM value_counts(2);
SELECT * FROM value_counts(2);

-- F: the fences, 1,000 (value, filter ordinal) probes a statement, as
-- `fences_looked_up` sends them (`VALUES … LATERAL … OFFSET 0`).
CREATE TABLE fence (generation bigint, filter_value text COLLATE "C", filter_ordinal bigint, ordinal bigint);
CREATE TABLE wanted (generation bigint, part bigint, list text);
CREATE FUNCTION fences_read(g bigint) RETURNS TABLE (statements int, fences bigint, ms numeric)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  list text;
BEGIN
  DELETE FROM fence WHERE generation = g;
  -- The probes wanted, as the process makes them from E's counts (not timed).
  DELETE FROM wanted WHERE generation = g;
  INSERT INTO wanted
    SELECT g, part, string_agg(format('(%L, %s::bigint)', v, f), ', ')
    FROM (SELECT v, f, (row_number() OVER (ORDER BY v, f) - 1) / 1000 AS part
          FROM (SELECT filter_value AS v, max(filter_ordinal) AS n FROM record
                WHERE generation = g GROUP BY filter_value) c,
               generate_series(1, c.n, 64) f) w
    GROUP BY part;
  started := clock_timestamp();
  statements := 0;
  FOR list IN SELECT w.list FROM wanted w WHERE w.generation = g ORDER BY part LOOP
    EXECUTE 'INSERT INTO fence SELECT ' || g || ', r.* FROM (VALUES ' || list || ') AS w(value, filter_ordinal), '
         || 'LATERAL (SELECT filter_value, filter_ordinal, ordinal FROM record '
         || 'WHERE generation = ' || g || ' AND filter_value = w.value '
         || 'AND filter_ordinal = w.filter_ordinal OFFSET 0) r';
    statements := statements + 1;
  END LOOP;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  SELECT count(*) INTO fences FROM fence WHERE generation = g;
  RETURN NEXT;
END $$;

\echo '--- F: the fences read, statuses, three runs (ms)'
SELECT * FROM fences_read(1);
SELECT * FROM fences_read(1);
SELECT * FROM fences_read(1);
\echo '--- F: the fences read, customers, three runs'
SELECT * FROM fences_read(2);
SELECT * FROM fences_read(2);
SELECT * FROM fences_read(2);
CREATE INDEX ON fence (generation, filter_value, ordinal);
ANALYZE fence;

-- G: filter anchors, 1,000 records a statement, as `filtered::anchors`
-- sends them: each record's value, its fence's filter ordinal (the value's
-- last fence at or before the anchor: found in the process, here from the
-- fence table) and its anchor in the whole list.
CREATE TABLE search (n int PRIMARY KEY, value text COLLATE "C", anchor bigint, fence bigint, expected bigint);
CREATE FUNCTION filter_anchors(g bigint, k int) RETURNS TABLE (statements int, ms numeric)
LANGUAGE plpgsql AS $$
DECLARE
  started timestamptz;
  batch text;
  counted bigint;
  checked bigint := 0;
BEGIN
  TRUNCATE search;
  INSERT INTO search
    SELECT i, r.filter_value, (hashint4(i * 7919 + k) & 1048575) % 1000000, 0, NULL
    FROM generate_series(1, k) i
    JOIN record r ON r.generation = g AND r.ordinal = 1 + (hashint4(i * 104729 + k) & 1048575) % 1000000;
  UPDATE search s SET fence = coalesce((SELECT f.filter_ordinal FROM fence f WHERE f.generation = g
      AND f.filter_value = s.value AND f.ordinal <= s.anchor ORDER BY f.ordinal DESC LIMIT 1), 0);
  started := clock_timestamp();
  statements := 0;
  FOR batch IN
    SELECT string_agg(format('(%s, %L, %s::bigint, %s::bigint)', n, value, fence, anchor), ', ')
    FROM (SELECT s.*, (row_number() OVER (ORDER BY n) - 1) / 1000 AS part FROM search s WHERE fence > 0) p
    GROUP BY part
  LOOP
    EXECUTE 'WITH w(n, value, fence, anchor) AS (VALUES ' || batch || ') '
         || 'SELECT sum(w.fence + c) FROM (SELECT w.*, (SELECT count(*) FROM record r WHERE r.generation = ' || g
         || ' AND r.filter_value = w.value AND r.filter_ordinal > w.fence '
         || 'AND r.filter_ordinal < w.fence + 64 AND r.ordinal <= w.anchor) AS c FROM w) w'
      INTO counted;
    checked := checked + coalesce(counted, 0);
    statements := statements + 1;
  END LOOP;
  ms := round(extract(epoch FROM clock_timestamp() - started) * 1000, 1);
  -- Checked on 50 records: each anchor is its value's rows at or before
  -- the anchor, counted whole.
  IF EXISTS (SELECT 1 FROM search s WHERE s.n <= 50 AND s.fence > 0
             AND (SELECT count(*) FROM record r WHERE r.generation = g AND r.filter_value = s.value
                  AND r.ordinal <= s.anchor)
               <> s.fence + (SELECT count(*) FROM record r WHERE r.generation = g
                  AND r.filter_value = s.value AND r.filter_ordinal > s.fence
                  AND r.filter_ordinal < s.fence + 64 AND r.ordinal <= s.anchor)) THEN
    RAISE EXCEPTION 'a filter anchor is wrong';
  END IF;
  RETURN NEXT;
END $$;

\echo '--- G: 1,000 records, statuses, three runs (ms)'
SELECT * FROM filter_anchors(1, 1000);
SELECT * FROM filter_anchors(1, 1000);
SELECT * FROM filter_anchors(1, 1000);
\echo '--- G: 20,000 records, statuses, two runs'
SELECT * FROM filter_anchors(1, 20000);
SELECT * FROM filter_anchors(1, 20000);
\echo '--- G: 1,000 records, customers, three runs'
SELECT * FROM filter_anchors(2, 1000);
SELECT * FROM filter_anchors(2, 1000);
SELECT * FROM filter_anchors(2, 1000);
\echo '--- G: 20,000 records, customers, two runs'
SELECT * FROM filter_anchors(2, 20000);
SELECT * FROM filter_anchors(2, 20000);
\echo '--- G: the plan of one statement (expect an index scan of record_filter_ordinal per record)'
EXPLAIN (COSTS OFF) WITH w(n, value, fence, anchor) AS (VALUES (1, 'Paid', 65::bigint, 5000::bigint), (2, 'Void', 1::bigint, 90000::bigint))
SELECT (SELECT count(*) FROM record r WHERE r.generation = 1 AND r.filter_value = w.value
        AND r.filter_ordinal > w.fence AND r.filter_ordinal < w.fence + 64 AND r.ordinal <= w.anchor) FROM w;

DROP SCHEMA exfil CASCADE;
