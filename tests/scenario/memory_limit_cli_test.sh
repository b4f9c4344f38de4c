#!/usr/bin/env bash
# Goal: running out of memory ends admitsim with one line and an exit code, never an abort (SIGABRT, exit 134).
# Method: under `ulimit -v` (address space), a scenario of 1,000,000 explicit requests that cannot even be read,
# and one that loads but whose run fills a queue of 1,000,000 waiters; check the exit code and stderr.
# Usage: memory_limit_cli_test.sh ADMITSIM
set -u
admitsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# 55 MB of text: its document does not fit in 300 MB of address space.
awk 'BEGIN {
  printf "{\"name\": \"big_text\", \"gate\": {\"kind\": \"fifo\", \"max_active\": 8, \"max_waiting\": 1000000, \"wait_deadline\": \"5s\"},\n"
  printf "\"workload\": {\"requests\": ["
  for (i = 0; i < 1000000; i++) printf "%s{\"id\": \"r%d\", \"at\": \"%dms\", \"service\": \"3ms\"}", (i ? ",\n" : ""), i, i
  printf "]}, \"checks\": {\"horizon\": \"30h\"}}\n"
}' > "$tmp/big_text.json"
# Small text, worst case about 1 GiB (under the 4 GiB limit): 1,000,000 requests at once wait behind one that never ends.
cat > "$tmp/big_queue.json" <<'JSON'
{"name": "big_queue", "seed": 1,
 "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 1000000, "wait_deadline": "24h", "event_log": 16},
 "service": {"service_time": {"kind": "fixed", "value": "20h"}},
 "workload": {"arrivals": [{"kind": "constant", "count": 1000000, "every": "1ns"}]},
 "checks": {"max_events": 100000000, "horizon": "30h"}}
JSON

# run NAME KB EXPECTED_CODES MESSAGE_PATTERN
run() {
  local name=$1 kb=$2 codes=$3 pattern=$4
  (ulimit -v "$kb"; exec "$admitsim" run "$tmp/$name.json" --out "$tmp/$name-report.json" --quiet) 2> "$tmp/$name.err"
  local rc=$?
  local lines
  lines=$(wc -l < "$tmp/$name.err")
  if [[ " $codes " != *" $rc "* ]]; then
    echo "FAIL $name under ulimit -v $kb: exit $rc, expected one of: $codes"; cat "$tmp/$name.err"; fail=1
  elif [[ $lines -ne 1 ]] || ! grep -qE "$pattern" "$tmp/$name.err"; then
    echo "FAIL $name under ulimit -v $kb: expected one line matching /$pattern/, got:"; cat "$tmp/$name.err"; fail=1
  elif [[ -e $tmp/$name-report.json ]]; then
    echo "FAIL $name under ulimit -v $kb: a report was written"; fail=1
  else
    echo "ok   $name under ulimit -v $kb: exit $rc: $(cat "$tmp/$name.err")"
  fi
}

# Reading: the loader refuses what it cannot hold (bad input, exit 2).
run big_text 300000 "2" "big_text.json: /: expected JSON text whose document fits in memory"
# Running: the world's bad_alloc reaches main. Exit 2 once main catches std::bad_alloc as bad input; until then main's
# catch of std::exception gives exit 1. Either way one line and no abort.
for kb in 200000 400000; do
  run big_queue $kb "2" "^admitsim: .*(bad_alloc|out of memory)"
done
exit $fail
