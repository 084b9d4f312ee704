#!/usr/bin/env bash
# The peak RSS (VmHWM) of the tributary server a benchmark starts, polled every
# 0.5 s until it exits; prints the last value seen. Start it just before the
# benchmark, with the binary the benchmark is given:
#
#   bench/experiments/peak_rss/run.sh target/release/tributary > peak.txt &
#   target/release/tributary-resync-bench --binary target/release/tributary --invoices 1000000 --changes 1000
set -euo pipefail
binary=${1:?the tributary binary the benchmark runs}
last=0
for tick in $(seq 1 3600); do
  pid=$(pgrep -f "^$binary serve" | head -1 || true)
  if [ -n "$pid" ]; then
    seen=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$seen" ] && last=$seen
  elif [ "$tick" -gt 20 ] && [ "$last" -gt 0 ]; then
    break
  fi
  sleep 0.5
done
echo "$binary peak RSS ${last} kB"
