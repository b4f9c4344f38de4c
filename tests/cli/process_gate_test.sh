#!/usr/bin/env bash
# Process gates at the command line (docs/process-gate.md): the lab against the example asyncio gate
# passes; the leaky gate's cancellation race is found by run, by explore --exhaustive and by a seed
# search, whose shrunk scenario replays from another folder (its cwd was written absolute); a seed
# search gives the same summary with 1 and 2 threads; a child that hangs is an inconclusive run (exit 1),
# never a pass; a bad process object is refused (exit 2, one line). A lease fleet whose client is the
# example asyncio client (examples/python_lease): it holds with agreeing clocks, breaks under clock skew
# (explore shrinks it, and the shrunk scenario replays; a sweep of the skew finds the unsafe side), and a
# matrix runs it as a design, beside the built-in seed client.
set -euo pipefail
bin="$1/admitsim"
name=process_gate
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"
ex="$root/examples/python_gate"

expect_rc 0 "$bin" run "$ex/lab_fifo_python.json" --out "$tmp/lab.json"
grep -q 'lab_fifo_python seed=1: pass (as expected)' "$tmp/out" "$tmp/err" || fail "lab: $(cat "$tmp/out" "$tmp/err")"
grep -q '"origin": "process"' "$tmp/lab.json" || fail "the report does not say the core was a process"
expect_rc 0 "$bin" replay "$tmp/lab.json"

expect_rc 0 "$bin" run "$ex/cancel_race.json" --out "$tmp/race.json"
expect_rc 0 "$bin" run "$ex/cancel_race_leaky.json" --out "$tmp/leak.json"
grep -q 'violation (as expected)' "$tmp/out" "$tmp/err" || fail "leaky run: $(cat "$tmp/out" "$tmp/err")"
grep -q 'process:leaky_gate.py:Gate broke its contract' "$tmp/leak.json" || fail "the leak's cause does not name the gate"

# Every same-instant order of the race: the leak shows in some, the correct gate in none.
expect_rc 0 "$bin" explore "$ex/cancel_race.json" --exhaustive --out "$tmp/xr"
grep -q '0 orders broke an invariant' "$tmp/out" "$tmp/err" || fail "exhaustive on gate.py: $(cat "$tmp/err")"

# A seed search with tie orders drawn per seed, on 1 and on 2 threads: the same summary, byte for byte.
for j in 1 2; do
  rc=0
  timeout 120 "$bin" explore "$ex/cancel_race_leaky.json" --seeds 12 --perturb-ties --jobs $j --out "$tmp/x$j" \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -le 1 ] || fail "explore --jobs $j exited $rc: $(cat "$tmp/err")"
done
cmp <(sed "s#$tmp/x1#DIR#g" "$tmp"/x1/*-explore.json) <(sed "s#$tmp/x2#DIR#g" "$tmp"/x2/*-explore.json) ||
  fail "explore's summary differs between 1 and 2 threads"

# The explored counterexample runs from another folder: its cwd is absolute in the file.
cex="$(ls "$tmp"/x1/*.scenario.json 2>/dev/null | head -1)"
if [ -n "$cex" ]; then
  mkdir "$tmp/elsewhere" && cp "$cex" "$tmp/elsewhere/c.json"
  ( cd "$tmp/elsewhere" && expect_rc 0 "$bin" run c.json --out r.json )
fi

# A child that hangs: inconclusive (exit 1), naming the request and the child's stderr. The child is a shell,
# which writes its line within milliseconds of its start: a Python child on a loaded machine could take longer
# than the limit to start, and so be judged hung with nothing on stderr yet. 2 s, as the C++ tests allow.
python3 - "$tmp/hang.json" "$ex" <<'PY'
import json, sys
s = json.load(open(sys.argv[2] + "/cancel_race.json"))
s["gates"][0]["process"] = {"command": ["sh", "-c", "echo hanging >&2; exec sleep 60"],
                            "message_timeout": "2s"}
json.dump(s, open(sys.argv[1], "w"))
PY
expect_rc 1 "$bin" run "$tmp/hang.json" --out "$tmp/hang.out.json"
grep -q 'inconclusive (process_hung)' "$tmp/out" "$tmp/err" || fail "hang: $(cat "$tmp/out" "$tmp/err")"
grep -q 'its last stderr lines: hanging' "$tmp/out" "$tmp/err" || fail "hang: no stderr quoted"

# A bad process object: exit 2, one line, the JSON path.
python3 - "$tmp/bad.json" "$ex" <<'PY'
import json, sys
s = json.load(open(sys.argv[2] + "/cancel_race.json"))
s["gates"][0]["process"]["command"] = []
json.dump(s, open(sys.argv[1], "w"))
PY
expect_rc 2 "$bin" run "$tmp/bad.json"
one_line '/gates/0/process/command: expected an array of 1 to 64 strings'
# The lease side: a fleet of asyncio clients, one child each.
lx="$root/examples/python_lease"
expect_rc 0 "$bin" run "$lx/fleet.json" --out "$tmp/fleet.json" --html "$tmp/fleet.html"
grep -q '<b>Process client</b>: each worker' "$tmp/fleet.html" || fail "the fleet's page does not say its client was a process"
grep -q 'python_lease_fleet\[seed\] seed=11: pass (as expected)' "$tmp/out" "$tmp/err" || fail "fleet: $(cat "$tmp/out" "$tmp/err")"
grep -q '"name": "process:client.py:make_gate"' "$tmp/fleet.json" || fail "the fleet's report does not name its client"
expect_rc 0 "$bin" replay "$tmp/fleet.json"
rc=0
timeout 120 "$bin" explore "$lx/clock_skew.json" --seeds 2 --jobs 2 --out "$tmp/lx" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 0 ] || fail "explore of the skewed Python fleet exited $rc: $(cat "$tmp/err")"
grep -q 'cause caller_clock_skew' "$tmp/out" "$tmp/err" || fail "explore: no clock-skew cause: $(cat "$tmp/err")"
min="$(ls "$tmp"/lx/*-min.json | head -1)"
[ -n "$min" ] || fail "explore wrote no shrunk scenario"
expect_rc 0 "$bin" run "$min" --out "$tmp/min.report.json"
# A sweep of the skewed worker's offset: safe with agreeing clocks, unsafe 20s ahead.
rc=0
timeout 120 "$bin" sweep "$lx/clock_skew.json" --param /fleet/clocks/0/offset --values 0s,20s --seeds 1 --jobs 2 \
  --out "$tmp/sweep.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -le 1 ] || fail "sweep exited $rc: $(cat "$tmp/err")"
python3 - "$tmp/sweep.json" <<'PY' || fail "the sweep of the Python fleet is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
classes = [v["class"] for v in d["grid"]]
assert classes == ["safe", "unsafe"], classes
PY
# A matrix with the Python client as a design: every cell judged (none inconclusive), and it breaks under
# clock skew, as the seed design does.
rc=0
timeout 300 "$bin" matrix "$lx/matrix.json" --seeds 1 --jobs 2 --no-shrink --out "$tmp/mx" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -le 1 ] || fail "matrix exited $rc: $(cat "$tmp/err")"
python3 - "$tmp/mx/python_lease-matrix.json" <<'PY' || fail "the matrix with a Python client is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
cells = {(c["design"], c["fault"]): c for c in d["cells"]}
for (design, fault), c in cells.items():
    assert c["status"] in ("holds", "breaks"), (design, fault, c["status"], c.get("first_inconclusive"))
assert cells[("python_client", "clock_skew")]["status"] == "breaks"
assert cells[("python_client", "clock_skew")]["seeds"]["violating"] == 1
assert cells[("python_client", "none")]["status"] == "holds"
assert cells[("seed", "clock_skew")]["status"] == "breaks"
PY
echo "$name: ok"
