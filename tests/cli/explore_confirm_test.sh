#!/usr/bin/env bash
# explore --confirm and matrix --confirm (docs/confirm.md, "explore --confirm and matrix --confirm"): each
# counterexample they find run on the redis-server on PATH, at a tenth of real time. Goal: a break a real run
# can make is confirmed in the explore summary, its stderr and its JUnit, and marks its matrix cell
# "broke (confirmed on redis-server ...)" in the JSON, Markdown, HTML, JUnit and stderr (and with --no-shrink
# the unshrunk counterexample is confirmed); a FIFO counterexample and a fault not made real yet give
# "confirmation inconclusive" without failing the command; --confirm changes nothing else in the outputs;
# merge --confirm confirms a sharded search's shrinks as explore --confirm does, its summary explore's but for
# the measurements; bad option values exit 2 with one line; SIGINT during a confirmation marks it and the
# output incomplete;
# no server and no folder is left behind (TMPDIR is the test's own). Method: the command's own outputs,
# read with python3.
set -euo pipefail
bin="$1/admitsim"
name=explore_confirm
source "$(dirname "$0")/lib.sh"
confirm_tmpdir

# run WANT_RC ARGS...: admitsim ARGS (60 s at most), its stderr in $tmp/err.
run() {
  local want="$1"; shift
  local rc=0
  timeout 60 "$bin" "$@" >"$tmp/stdout" 2>"$tmp/err" </dev/null || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "exit $rc (124: it hung), wanted $want: admitsim $*"; }
}
# no_confirmation JSON OUT: JSON with every "confirmation" object removed, as OUT (what --confirm must leave alone).
no_confirmation() {
  python3 - "$1" "$2" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "confirmation"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
json.dump(strip(json.load(open(sys.argv[1]))), open(sys.argv[2], "w"), indent=1)
PY
}

# --- explore: a skewed clock's counterexample confirmed ----------------------------------------------------
run 0 explore scenarios/clock_skew.json --seeds 2 --jobs 2 --out "$tmp/skew" --junit "$tmp/skew.xml" \
  --confirm --time-scale 0.1
python3 - "$tmp/skew/clock_skew-explore.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = [s for s in d["shrunk"] if s["variant"] == "seed"]
assert len(e) == 1, d["shrunk"]
c = e[0]["confirmation"]
assert c["verdict"] == "confirmed", c
assert c["label"].startswith("confirmed on redis-server "), c
assert c["scenario"] == e[0]["minimal_scenario"], (c["scenario"], e[0])
assert c["time_scale"] == 0.1 and "interrupted" not in c, c
assert c["simulated"] == {"verdict": "violation", "broken": ["portal_inflight_le_cap"]}, c
assert not c["real_runs"][0]["invariants"]["portal_inflight_le_cap"]["holds"], c
assert d["seeds"].get("complete", True) and d["exit"]["code"] == 0, d["exit"]
PY
grep -qF "seed 0[seed] broke portal_inflight_le_cap (confirmed on redis-server " "$tmp/err" ||
  { cat "$tmp/err" >&2; fail "explore's stderr does not say the finding was confirmed"; }
grep -qF "on a real redis-server: broke portal_inflight_le_cap (confirmed on redis-server " "$tmp/skew.xml" ||
  fail "explore's JUnit does not say the finding was confirmed: $(cat "$tmp/skew.xml")"
# The same search without --confirm: the same summary but for the confirmation.
run 0 explore scenarios/clock_skew.json --seeds 2 --jobs 1 --out "$tmp/skew-plain"
grep -q '"confirmation"' "$tmp/skew-plain/clock_skew-explore.json" && fail "a summary without --confirm has a confirmation"
no_confirmation "$tmp/skew/clock_skew-explore.json" "$tmp/a.json"
sed "s#$tmp/skew-plain#$tmp/skew#g" "$tmp/skew-plain/clock_skew-explore.json" >"$tmp/plain.json"
no_confirmation "$tmp/plain.json" "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || { diff "$tmp/a.json" "$tmp/b.json" | head -20 >&2; fail "--confirm changed the explore summary beyond its confirmations"; }

# --- merge --confirm: the same search in two shards, merged, its shrink confirmed as explore's was ----------
run 0 explore scenarios/clock_skew.json --seeds 2 --jobs 1 --shard 0/2 --out "$tmp/sh0"
run 0 explore scenarios/clock_skew.json --seeds 2 --jobs 1 --shard 1/2 --out "$tmp/sh1"
run 0 merge "$tmp/sh0/clock_skew-explore.json" "$tmp/sh1/clock_skew-explore.json" --out "$tmp/merged" \
  --confirm --time-scale 0.1
python3 - "$tmp/merged/clock_skew-explore.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = [s for s in d["shrunk"] if s["variant"] == "seed"]
assert len(e) == 1, d["shrunk"]
c = e[0]["confirmation"]
assert c["verdict"] == "confirmed" and c["label"].startswith("confirmed on redis-server "), c
assert c["scenario"] == e[0]["minimal_scenario"], (c["scenario"], e[0])
assert c["time_scale"] == 0.1 and "interrupted" not in c, c
assert d["seeds"].get("complete", True) and d["exit"]["code"] == 0, d["exit"]
PY
grep -qF "seed 0[seed] broke portal_inflight_le_cap (confirmed on redis-server " "$tmp/err" ||
  { cat "$tmp/err" >&2; fail "merge's stderr does not say the shrink was confirmed"; }
# But for the measurements, the summary explore --confirm wrote for the search as one.
sed "s#$tmp/merged#$tmp/skew#g" "$tmp/merged/clock_skew-explore.json" >"$tmp/merged.json"
no_confirmation "$tmp/merged.json" "$tmp/c.json"
cmp -s "$tmp/a.json" "$tmp/c.json" || { diff "$tmp/a.json" "$tmp/c.json" | head -20 >&2; fail "merge --confirm's summary is not explore --confirm's but for its confirmations"; }

# --- explore: a FIFO counterexample has nothing to confirm on Redis: inconclusive, the search as it was ----
run 0 explore scenarios/fifo_crash_restart.json --seeds 1 --out "$tmp/fifo" --confirm --time-scale 0.1
python3 - "$tmp/fifo/fifo_crash_restart-explore.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["shrunk"][0]["confirmation"]
assert c["verdict"] == "inconclusive" and c["label"] == "confirmation inconclusive", c
assert "FIFO gate" in c["why"] and c["real_runs"] == [], c
assert d["exit"]["code"] == 0, d["exit"]
PY
grep -qF "broke portal_inflight_le_cap (confirmation inconclusive)" "$tmp/err" || fail "FIFO: $(cat "$tmp/err")"

# --- matrix: a small matrix, one cell confirmed, the cells under a step of the server's clock (which a real
# server, reading the machine's clock, cannot take) inconclusive -------------------------------------------
cat >"$tmp/base.json" <<'J'
{"name": "small_base", "gate": {"kind": "lease", "limit": 2, "lease": "10s"}, "fleet": {"workers": 4},
 "service": {"portal_cap": 2, "service_time": {"kind": "uniform", "min": "1s", "max": "3s"}, "client_timeout": "20s"},
 "workload": {"arrivals": [{"kind": "constant", "count": 30, "every": "250ms"}]}}
J
cat >"$tmp/m.json" <<'J'
{"format": "admitsim-matrix/1", "name": "confirm_small", "scenario": "base.json", "seeds": 2,
 "baseline": false, "all_faults": false,
 "designs": [{"name": "seed", "variant": "seed"}, {"name": "server_time", "variant": "server_time"}],
 "faults": [{"name": "clock_skew", "faults": {"schedule": [{"at": "0ms", "kind": "clock_step", "target": "worker:0", "step": "+20s"}]}},
            {"name": "redis_clock", "faults": {"schedule": [{"at": "2s", "kind": "clock_step", "target": "redis", "step": "+20s"}]}}]}
J
run 0 matrix "$tmp/m.json" --jobs 2 --out "$tmp/mx" --markdown "$tmp/m.md" --html "$tmp/m.html" --junit "$tmp/m.xml" \
  --confirm --time-scale 0.1
python3 - "$tmp/mx/confirm_small-matrix.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cells = {(c["design"], c["fault"]): c for c in d["cells"]}
c = cells[("seed", "clock_skew")]["counterexample"]["confirmation"]
assert c["verdict"] == "confirmed", c
assert c["words"].startswith("broke (confirmed on redis-server ") and c["words"] == "broke (" + c["label"] + ")", c
assert cells[("server_time", "clock_skew")]["status"] == "holds" and cells[("server_time", "clock_skew")]["counterexample"] is None
for design in ("seed", "server_time"):
    x = cells[(design, "redis_clock")]["counterexample"]["confirmation"]
    assert x["words"] == "broke (confirmation inconclusive)", x
    assert x["why"].startswith("not made real yet: /faults/schedule/0: ") and x["real_runs"] == [], x
assert d["complete"] is True and d["exit"] == {"code": 0, "why": []}, d["exit"]
PY
grep -qE '^\| seed \| \*\*breaks\*\* 2/2, \+[0-9]+, seed 0 broke \(confirmed on redis-server [0-9.]+\) \| \*\*breaks\*\* [0-9]/2, \+[0-9]+, seed [0-9] broke \(confirmation inconclusive\) \|$' "$tmp/m.md" ||
  fail "the Markdown table does not mark the cells: $(cat "$tmp/m.md")"
grep -qF "broke (confirmed on redis-server " "$tmp/m.html" || fail "the HTML table does not mark the confirmed cell"
grep -qF "broke (confirmed on redis-server " "$tmp/m.xml" || fail "the JUnit file does not mark the confirmed cell"
if command -v xmllint >/dev/null; then xmllint --noout --schema tests/reports/junit.xsd "$tmp/m.xml" 2>/dev/null || fail "the JUnit file does not fit junit.xsd"; fi
grep -qF "seed x clock_skew: breaks 2/2 seeds, first portal_inflight_le_cap, broke (confirmed on redis-server " "$tmp/err" ||
  { cat "$tmp/err" >&2; fail "matrix's stderr does not mark the confirmed cell"; }
grep -qE "^  seed x redis_clock: breaks .*, broke \(confirmation inconclusive\): not made real yet: " "$tmp/err" ||
  { cat "$tmp/err" >&2; fail "matrix's stderr does not mark the inconclusive cell"; }
# The same matrix without --confirm: the same outputs but for the confirmations.
run 0 matrix "$tmp/m.json" --jobs 1 --out "$tmp/mx-plain" --markdown "$tmp/m-plain.md"
grep -q -e '"confirmation"' -e 'broke (' "$tmp/mx-plain/confirm_small-matrix.json" "$tmp/m-plain.md" &&
  fail "a matrix without --confirm has a confirmation"
no_confirmation "$tmp/mx/confirm_small-matrix.json" "$tmp/a.json"
sed "s#$tmp/mx-plain#$tmp/mx#g" "$tmp/mx-plain/confirm_small-matrix.json" >"$tmp/plain.json"
no_confirmation "$tmp/plain.json" "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || { diff "$tmp/a.json" "$tmp/b.json" | head -20 >&2; fail "--confirm changed the matrix summary beyond its confirmations"; }
sed -E 's/ broke \([^)]*\)//g' "$tmp/m.md" | cmp -s - "$tmp/m-plain.md" || fail "--confirm changed the Markdown table beyond its marks"

# With --no-shrink the counterexample confirmed is the first violating seed's explored scenario, unshrunk.
run 0 matrix "$tmp/m.json" --jobs 2 --out "$tmp/mx-unshrunk" --no-shrink --confirm --time-scale 0.1
python3 - "$tmp/mx-unshrunk/confirm_small-matrix.json" <<'PY'
import json, sys
x = json.load(open(sys.argv[1]))["cells"][0]["counterexample"]
assert x["shrunk"] is False and x["confirmation"]["verdict"] == "confirmed", x
PY

# --- bad values: one line naming the option, exit 2, nothing run ---------------------------------------------
expect_rc 2 "$bin" explore scenarios/clock_skew.json --time-scale 0.1 --out "$tmp/bad"
one_line "--time-scale: expected --confirm as well"
expect_rc 2 "$bin" matrix "$tmp/m.json" --confirm-runs 2 --out "$tmp/bad"
one_line "--confirm-runs: expected --confirm as well"
expect_rc 2 "$bin" explore scenarios/clock_skew.json --confirm --confirm-runs 0 --out "$tmp/bad"
one_line "--confirm-runs: expected an integer from 1 to 1000, got \"0\""
expect_rc 2 "$bin" matrix "$tmp/m.json" --confirm --time-scale 101 --out "$tmp/bad"
one_line "--time-scale: expected a number from 0.01 to 100, got \"101\""
expect_rc 2 "$bin" explore scenarios/clock_skew.json --confirm --time-scale fast --out "$tmp/bad"
one_line "--time-scale: expected a number from 0.01 to 100, got \"fast\""
expect_rc 2 "$bin" matrix "$tmp/m.json" --confirm --confirm-wall-limit 0 --out "$tmp/bad"
one_line "--confirm-wall-limit: expected an integer from 1 to 86400, got \"0\""
expect_rc 2 "$bin" explore scenarios/clock_skew.json --confirm --no-shrink --out "$tmp/bad"
one_line "--confirm: expected no --no-shrink"
expect_rc 2 "$bin" explore scenarios/clock_skew.json --confirm --shard 0/2 --out "$tmp/bad"
one_line "--confirm: expected no --shard"
expect_rc 2 "$bin" explore scenarios/clock_skew.json --exhaustive --confirm --out "$tmp/bad"
one_line "--exhaustive excludes --confirm"
expect_rc 2 "$bin" merge "$tmp/sh0/clock_skew-explore.json" "$tmp/sh1/clock_skew-explore.json" --time-scale 0.1 --out "$tmp/bad"
one_line "--time-scale: expected --confirm as well"
"$bin" explore scenarios/clock_skew.json --seeds 2 --jobs 1 --shard 0/2 --no-shrink --out "$tmp/ns0" -q || true
"$bin" explore scenarios/clock_skew.json --seeds 2 --jobs 1 --shard 1/2 --no-shrink --out "$tmp/ns1" -q || true
expect_rc 2 "$bin" merge "$tmp/ns0/clock_skew-explore.json" "$tmp/ns1/clock_skew-explore.json" --confirm --out "$tmp/bad"
one_line "--confirm: expected shards that shrank"
[ ! -e "$tmp/bad" ] || fail "a refused command wrote its folder"

# --- SIGINT during a confirmation (at ten times real time it would take a minute): marked, exit 1 ----------
interrupt "$tmp/int.stdout" "$tmp/int.err" explore scenarios/clock_skew.json --seeds 1 --jobs 1 --out "$tmp/int" \
  --confirm --time-scale 10
[ "$rc" -eq 1 ] || { cat "$tmp/int.err" >&2; fail "explore, SIGINT: exit $rc, wanted 1"; }
python3 - "$tmp/int/clock_skew-explore.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["shrunk"][0]["confirmation"]
assert c["interrupted"] is True and c["verdict"] == "inconclusive", c
assert d["seeds"]["complete"] is False, d["seeds"]
assert any("while confirming" in w for w in d["exit"]["why"]), d["exit"]
PY
grep -qF "(confirmation inconclusive, interrupted)" "$tmp/int.err" || fail "explore, SIGINT: $(cat "$tmp/int.err")"
interrupt "$tmp/int.stdout" "$tmp/int.err" matrix "$tmp/m.json" --jobs 1 --out "$tmp/int-mx" --markdown "$tmp/int.md" \
  --confirm --time-scale 10
[ "$rc" -eq 1 ] || { cat "$tmp/int.err" >&2; fail "matrix, SIGINT: exit $rc, wanted 1"; }
grep -qF "broke (confirmation inconclusive, interrupted)" "$tmp/int.md" || fail "matrix, SIGINT: $(cat "$tmp/int.md")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["complete"] is False and d["exit"]["code"] == 1, d["exit"]' \
  "$tmp/int-mx/confirm_small-matrix.json"
interrupt "$tmp/int.stdout" "$tmp/int.err" merge "$tmp/sh0/clock_skew-explore.json" "$tmp/sh1/clock_skew-explore.json" \
  --out "$tmp/int-mg" --confirm --time-scale 10
[ "$rc" -eq 1 ] || { cat "$tmp/int.err" >&2; fail "merge, SIGINT: exit $rc, wanted 1"; }
python3 - "$tmp/int-mg/clock_skew-explore.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["shrunk"][0]["confirmation"]
assert c["interrupted"] is True and c["verdict"] == "inconclusive", c
assert d["seeds"]["complete"] is False and d["exit"]["code"] == 1, (d["seeds"], d["exit"])
assert d["exit"]["why"][0] == "interrupted by SIGINT or SIGTERM while confirming on a real redis-server", d["exit"]
PY
grep -qF "(confirmation inconclusive, interrupted)" "$tmp/int.err" || fail "merge, SIGINT: $(cat "$tmp/int.err")"

# --- nothing left behind: every server stopped, every folder removed -----------------------------------------
nothing_left_behind
echo "$name: ok"
