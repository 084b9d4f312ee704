#!/bin/bash
# A/B of the sync alone: one binary syncs 1,000,000 sandbox invoices on a fresh PostgreSQL database
# (postgres@127.0.0.1:5432, the URL as given: TLS over loopback when the server offers it; set
# URLSUFFIX='?sslmode=disable' for plain TCP), and the wall time from POST .../data/all until the invoices'
# pull operation has ended is printed. Used to compare two builds back to back on one machine, where
# separate benchmark runs drift by +-10 s (BENCHMARKS.md). An older build, for example:
#   git worktree add /tmp/old 226bcdb && (cd /tmp/old && CARGO_TARGET_DIR=/tmp/oldtarget cargo build --release --bin tributary)
#   bench/scripts/ab_sync.sh /tmp/oldtarget/release/tributary old; bench/scripts/ab_sync.sh target/release/tributary new
# With RESYNC=1, the same data is then synced again and timed too: the swap compares every record with its
# previous copy (issue 14's incremental reads), the case a partner's daily sync is.
# POLL sets the seconds between polls (default 0.1): each poll starts curl and python3, about a fifth of a core
# at 0.1 s on a 2-core machine, which the sync then lacks; POLL=1 leaves it nearly alone, to a second's resolution.
# usage: ab_sync.sh BINARY LABEL   (needs curl, psql and python3; the server log goes to /tmp/ab_LABEL.log)
set -e
BIN=$1; LABEL=$2; PORT=18090; DB=ab_$$
psql -h 127.0.0.1 -U postgres -d test -qc "CREATE DATABASE $DB"
KEYS=$($BIN encryption-key generate)
TRIBUTARY_DATABASE_URL=postgres://postgres@127.0.0.1:5432/$DB$URLSUFFIX TRIBUTARY_ENCRYPTION_KEYS=$KEYS TRIBUTARY_BOOTSTRAP_API_KEY=abkey TRIBUTARY_BIND=127.0.0.1:$PORT $BIN serve > /tmp/ab_$LABEL.log 2>&1 &
SERVER=$!
sleep 3
AUTH="Authorization: Basic $(printf abkey | base64)"
B=http://127.0.0.1:$PORT
C=$(curl -s -H "$AUTH" -H 'content-type: application/json' -d '{"name":"AB"}' $B/companies | python3 -c 'import sys,json;d=json.load(sys.stdin);print(d.get("companyId") or d.get("id"))')
CN=$(curl -s -H "$AUTH" -H 'content-type: application/json' -d '{"platformKey":"sandbox"}' $B/companies/$C/connections | python3 -c 'import sys,json;d=json.load(sys.stdin);print(d.get("connectionId") or d.get("id"))')
curl -s -o /dev/null -X PUT -H "$AUTH" -H 'content-type: application/json' -d '{"organizationId":"sbx-ab","accessToken":"t","invoiceCount":1000000,"seed":2026}' $B/companies/$C/connections/$CN/authorization
# Queues a sync of everything and waits until the newest invoices operation has ended; prints its wall time.
timed_sync() {
  START=$(date +%s.%N)
  curl -s -o /tmp/ab_ops.json -X POST -H "$AUTH" $B/companies/$C/data/all
  OPERATION=$(python3 -c 'import json;d=json.load(open("/tmp/ab_ops.json"));d=d["results"] if isinstance(d,dict) else d;print([o["pullOperationId"] for o in d if o.get("dataType")=="invoices"][0])' 2>/dev/null || true)
  while true; do
    sleep ${POLL:-0.1}
    curl -s -H "$AUTH" "$B/companies/$C/data/history?pageSize=100" -o /tmp/ab_hist.json
    if OPERATION=$OPERATION python3 - <<'PY'
import json,os,sys
d=json.load(open('/tmp/ab_hist.json'))
ops=[o for o in d['results'] if o.get('dataType')=='invoices']
wanted=os.environ.get('OPERATION')
if wanted:
    ops=[o for o in ops if o.get('pullOperationId')==wanted]
sys.exit(0 if ops and ops[0]['status'] in ('Complete','Failed') else 1)
PY
    then break; fi
  done
  END=$(date +%s.%N)
  python3 -c "import json;d=json.load(open('/tmp/ab_hist.json'));print([ (o['dataType'],o['status']) for o in d['results']][:6])"
  echo "$LABEL $1 wall: $(python3 -c "print(round($END-$START,1))") s"
}
timed_sync sync
if [ -n "$RESYNC" ]; then
  FIRST=$(curl -s -H "$AUTH" "$B/companies/$C/data/invoices?pageSize=1" | python3 -c 'import sys,json;print(json.load(sys.stdin)["results"][0]["modifiedDate"])')
  timed_sync resync
  # The same data again: no record may have changed.
  CHANGED=$(curl -s -G -H "$AUTH" "$B/companies/$C/data/invoices" --data-urlencode "pageSize=1" --data-urlencode "query=modifiedDate>$FIRST" | python3 -c 'import sys,json;print(json.load(sys.stdin)["totalResults"])')
  echo "$LABEL records changed by the resync: $CHANGED"
fi
kill $SERVER; wait $SERVER 2>/dev/null || true
psql -h 127.0.0.1 -U postgres -d test -qc "DROP DATABASE $DB"
