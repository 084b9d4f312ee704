#!/bin/bash
# Issue 33, "measure before choosing": what reading a page through a table
# partitioned by LIST (part) costs against a plain table, with 50, 200 and
# 500 partitions (one of a million rows, the others of 100), the page's
# partition named by a bound parameter as the product would bind it.
# pgbench, 2 clients, 15 s each, prepared statements; plan_cache_mode as
# PostgreSQL chooses (auto), and forced generic (every partition locked).
# Run from this folder: ./run.sh   (drops the schema expg at the end).
# Figures: BENCHMARKS.md, "Reading through partitions".
set -euo pipefail
cd "$(dirname "$0")"
URL_ARGS=(-h 127.0.0.1 -U postgres)
psql -q "${URL_ARGS[@]}" -d test -f setup.sql
run() {
  PGOPTIONS="-c plan_cache_mode=$2" pgbench "${URL_ARGS[@]}" -n -c 2 -j 2 -T 15 -M prepared -f "$1" test 2>&1 \
    | grep -E "latency average"
}
echo "plain, auto: $(run plain_param.pgb auto)"
echo "plain, generic: $(run plain_param.pgb force_generic_plan)"
for partitions in 50 200 500; do
  ./parts.sh "$partitions" >/dev/null 2>&1
  echo "$partitions partitions, auto: $(run parted_param.pgb auto)"
  echo "$partitions partitions, generic: $(run parted_param.pgb force_generic_plan)"
done
psql -q "${URL_ARGS[@]}" -d test -c "DROP SCHEMA expg CASCADE"
