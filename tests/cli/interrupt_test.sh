#!/usr/bin/env bash
# Goal: SIGINT ends a matrix and a sweep the way it ends an explore: no new run starts, the outputs
# cover what ran and say they are incomplete, no cell or value left short is shown as holding or safe,
# stderr says so, and the exit code is 1. Method: a matrix and a sweep with a seed budget far too
# large to finish, interrupted after a second; their summaries read back.
# Usage: interrupt_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=interrupt_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"

# --- matrix ----------------------------------------------------------------------------------------------
interrupt "$tmp/m.out" "$tmp/m.err" matrix scenarios/matrix/catalogue.json --seeds 100000 --jobs 2 --no-shrink \
  --out "$tmp/matrix" --junit "$tmp/matrix.xml"
[ "$rc" -eq 1 ] || { cat "$tmp/m.err" >&2; fail "an interrupted matrix exited $rc"; }
grep -q '^admitsim: matrix: interrupted (SIGINT)' "$tmp/m.err" || { cat "$tmp/m.err" >&2; fail "stderr does not say the matrix was interrupted"; }
summary="$tmp/matrix/catalogue-matrix.json"
[ -f "$summary" ] || fail "no matrix summary after SIGINT"
python3 - "$summary" "$tmp/matrix.xml" <<'PY' || fail "the interrupted matrix's summary is wrong"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
assert d["complete"] is False, "not marked incomplete"
assert d["exit"]["code"] == 1 and d["exit"]["why"][0].startswith("interrupted by SIGINT"), d["exit"]
cells = d["cells"]
short = [c for c in cells if c["seeds"]["not_run"] > 0]
assert short, "no cell counts seeds not run"
for c in cells:
    assert c["seeds"]["run"] + c["seeds"]["not_run"] == 100000, c
    if c["seeds"]["not_run"] > 0:
        assert c["status"] in ("inconclusive", "breaks", "error"), c
        assert c["status"] != "holds"
assert sum(c["seeds"]["run"] for c in cells) > 0, "nothing ran"
suites = ET.parse(sys.argv[2]).getroot()
assert int(suites.get("errors")) + int(suites.get("failures")) > 0, "the JUnit file reports no unfinished cell"
PY

# --- sweep -----------------------------------------------------------------------------------------------
interrupt "$tmp/s.out" "$tmp/s.err" sweep scenarios/sweep_clock_skew.json --param /fleet/clocks/0/offset \
  --values 1s,2s,3s --seeds 1000000 --jobs 2 --out "$tmp/sweep.json" --html "$tmp/sweep.html"
[ "$rc" -eq 1 ] || { cat "$tmp/s.err" >&2; fail "an interrupted sweep exited $rc"; }
grep -q '^admitsim: sweep: interrupted (SIGINT)' "$tmp/s.err" || { cat "$tmp/s.err" >&2; fail "stderr does not say the sweep was interrupted"; }
python3 - "$tmp/sweep.json" <<'PY' || fail "the interrupted sweep's report is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["complete"] is False, "not marked incomplete"
assert d["exit"] == 1
for v in d["grid"]:
    assert v["class"] != "safe" or v["seeds"] == 1000000, v
PY
grep -q 'Incomplete' "$tmp/sweep.html" || fail "the sweep page does not say it is incomplete"
echo "$name: ok"
