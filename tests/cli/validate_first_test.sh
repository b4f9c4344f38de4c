#!/usr/bin/env bash
# Goal: run validates every scenario file before it runs any, including a lease gate beside another gate
# (once refused by the world only, after earlier files had run), and check and explore refuse it too.
# Method: run a good file and such a bad one together; no report may be written; check the bad one alone.
# Usage: validate_first_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=validate_first_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"

python3 - "$tmp/two_gates.json" <<'PY'
import json, sys
s = json.load(open("scenarios/crashed_holder.json"))
g = s.pop("gate"); g["name"] = "lease"
s["gates"] = [g, {"name": "f", "kind": "fifo", "max_active": 1, "max_waiting": 1, "wait_deadline": "1s"}]
s["workload"]["arrivals"][0]["gate"] = "lease"
s["name"] = "two_gates"
json.dump(s, open(sys.argv[1], "w"))
PY
expect_rc 2 "$bin" run scenarios/lab_fifo.json "$tmp/two_gates.json" --out-dir "$tmp/out-dir"
one_line "$tmp/two_gates.json: /gates/1: expected a lease gate to be the scenario's only gate"
[ ! -e "$tmp/out-dir" ] || fail "run wrote reports before finding the bad file"
expect_rc 2 "$bin" check "$tmp/two_gates.json"
one_line "/gates/1: expected a lease gate to be the scenario's only gate"
expect_rc 2 "$bin" explore "$tmp/two_gates.json" --seeds 1 --out "$tmp/ex"
one_line "/gates/1: expected a lease gate to be the scenario's only gate"
echo "$name: ok"
