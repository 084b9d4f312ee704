#!/bin/bash
# Issue 33, "measure before choosing": a million rows loaded as the swap
# loads them (two halves at once, 55% and 45%), into today's shape (one
# table, its three unique indexes kept row by row) and into a bare table
# indexed once (three indexes built at once on three connections) and then
# attached as a partition of a partitioned record (its CHECK spares the
# scan). Wall seconds per step. Run from anywhere: bench/experiments/bare_partition/run.sh
# (drops the schema exp3 at the end). Figures: BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")"
PSQL=(psql -q -X -h 127.0.0.1 -U postgres -d test)
"${PSQL[@]}" -f setup.sql 2>/dev/null
seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
halves() {
  "${PSQL[@]}" -c "INSERT INTO $1 SELECT * FROM exp3.s WHERE ordinal <= 550000 ORDER BY ordinal" &
  "${PSQL[@]}" -c "INSERT INTO $1 SELECT * FROM exp3.s WHERE ordinal > 550000 ORDER BY ordinal" &
  wait
}
start=$(seconds); halves exp3.today; end=$(seconds)
echo "today: two halves into the indexed table: $(elapsed "$start" "$end") s"
"${PSQL[@]}" -c "CHECKPOINT"
start=$(seconds); halves exp3.record_9; loaded=$(seconds)
"${PSQL[@]}" -c "SET maintenance_work_mem = '256MB'; ALTER TABLE exp3.record_9 ADD PRIMARY KEY (generation, record_id)" &
"${PSQL[@]}" -c "SET maintenance_work_mem = '256MB'; CREATE UNIQUE INDEX ON exp3.record_9 (generation, ordinal)" &
"${PSQL[@]}" -c "SET maintenance_work_mem = '256MB'; CREATE UNIQUE INDEX ON exp3.record_9 (generation, filter_value, filter_ordinal)" &
wait
indexed=$(seconds)
"${PSQL[@]}" -c "ALTER TABLE exp3.record ATTACH PARTITION exp3.record_9 FOR VALUES IN (9)"
attached=$(seconds)
echo "bare: two halves $(elapsed "$start" "$loaded") s, three indexes at once $(elapsed "$loaded" "$indexed") s, attach $(elapsed "$indexed" "$attached") s, in all $(elapsed "$start" "$attached") s"
"${PSQL[@]}" -c "DROP SCHEMA exp3 CASCADE" 2>/dev/null
