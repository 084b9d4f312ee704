#!/usr/bin/env bash
# The swap's move of a million rows two ways, one statement each (issue 33, BENCHMARKS.md "The swap's halves
# without sorting the JSON"): hashed_sort.sql (rows joined by hash and sorted with their JSON) and by_position.sql
# (positions sorted, rows fetched by TID in list order), alternated twice, with the plans' sort methods and times.
# Run: bench/experiments/swap_order/run.sh [postgres URL]. Drops its scratch schema `exq` when done.
set -euo pipefail
url=${1:-postgres://postgres@127.0.0.1:5432/test}
here=$(dirname "$0")
psql -X -q -v ON_ERROR_STOP=1 "$url" -f "$here/setup.sql" > /dev/null
for round in 1 2; do
  for way in hashed_sort by_position; do
    echo "== $way ($round)"
    psql -X -q -v ON_ERROR_STOP=1 "$url" -f "$here/$way.sql" | grep -E "Sort Method|Nested Loop|Hash Join|Execution Time"
  done
done
psql -X -q -v ON_ERROR_STOP=1 "$url" -c "DROP SCHEMA exq CASCADE"
