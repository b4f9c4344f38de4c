#!/usr/bin/env bash
# run.sh PREFIX: builds examples/own_gate against the admitsim installed in
# PREFIX, runs its own gate core (ring_gate) through the library on the
# example's scenario and on the installed catalogue's FIFO scenarios, and
# checks that admitsim catches the broken copy. scripts/install_check.sh runs
# it against a fresh install and against the .deb's contents; .ci/run runs
# that. Exit 0 when every check holds, 1 with one "own_gate: FAIL: ..." line
# otherwise, 2 for a bad argument.
set -euo pipefail
[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: examples/own_gate/run.sh PREFIX (an admitsim install)" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/admitsim-own-gate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "own_gate: FAIL: $*" >&2; [ -s "$tmp/log" ] && tail -n 20 "$tmp/log" >&2; exit 1; }
share=$(find "$prefix" -type d -path '*/share/admitsim' -print -quit)
[ -n "$share" ] || fail "no share/admitsim under $prefix"
cli="$prefix/bin/admitsim"
[ -x "$cli" ] || cli="$prefix/usr/bin/admitsim"

cmake -S "$here" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/log" 2>&1 \
  || fail "configure against $prefix"
cmake --build "$tmp/build" -j2 >"$tmp/log" 2>&1 || fail "build"
good="$tmp/build/own_gate_run"
broken="$tmp/build/own_gate_run_broken"

# The team's core passes the example's scenario; its report names the core.
"$good" "$here/scenario.json" --out "$tmp/good.json" 2>"$tmp/log" || fail "ring_gate did not pass scenario.json"
grep -q '"name": "example::ring_gate"' "$tmp/good.json" || fail "the report does not name the core (gate_core)"
grep -q '"verdict": "pass"' "$tmp/good.json" || fail "the report's verdict is not pass"
grep -q '"racer"' "$tmp/good.json" || fail "the report has no racer case"

# The same core on every installed FIFO scenario it can run comes out as each expects.
ran=0
for f in "$share"/scenarios/lab_fifo.json "$share"/scenarios/fifo_*.json "$share"/scenarios/explore_handover_race.json \
         "$share"/scenarios/march1_surge_fifo.json; do
  rc=0
  (cd "$share" && "$good" "scenarios/$(basename "$f")" --out "$tmp/cat.json") 2>"$tmp/log" || rc=$?
  [ $rc -eq 0 ] || fail "ring_gate: $(basename "$f") did not come out as expected (exit $rc)"
  ran=$((ran + 1))
done
[ $ran -ge 5 ] || fail "only $ran catalogue scenarios ran"

# The broken copy is caught: a violation where a pass was expected (exit 1), the lease it kept named.
rc=0
"$broken" "$here/scenario.json" --out "$tmp/broken.json" --html "$tmp/broken.html" 2>"$tmp/log" || rc=$?
[ $rc -eq 1 ] || fail "the broken copy was not caught (exit $rc, expected 1)"
grep -q '"verdict": "violation"' "$tmp/broken.json" || fail "the broken copy's report is not a violation"
grep -q '"own_core"' "$tmp/broken.json" || fail "the broken copy's report does not blame the own core"
grep -q 'its lease is never released' "$tmp/broken.json" || fail "the broken copy's report does not say which lease leaked"
grep -q 'id="gate-core"' "$tmp/broken.html" && grep -q 'example::ring_gate_broken' "$tmp/broken.html" \
  || fail "the broken copy's HTML page does not name the core"

# A seed search through admitsim's explorer: the core holds over 300 seeds; the broken copy's bug is found.
"$good" "$here/scenario.json" --seeds 300 >"$tmp/search" 2>"$tmp/log" || { cat "$tmp/search" >>"$tmp/log"; fail "ring_gate broke in a seed search"; }
grep -q '300 seeds, 0 broke' "$tmp/search" || fail "the search did not run 300 clean seeds: $(cat "$tmp/search")"
rc=0
"$broken" "$here/scenario.json" --seeds 300 >"$tmp/search" 2>"$tmp/log" || rc=$?
[ $rc -eq 1 ] && grep -q 'first seed' "$tmp/search" || fail "the search did not find the broken copy's bug (exit $rc)"

# Output paths are handled as admitsim's CLI handles them.
"$good" "$here/scenario.json" --out /dev/null 2>"$tmp/log" || fail "--out /dev/null"
[ -c /dev/null ] || fail "--out /dev/null replaced /dev/null"
rc=0
"$good" "$here/scenario.json" --out "$tmp/missing/dir/r.json" 2>"$tmp/log" || rc=$?
[ $rc -eq 2 ] || fail "--out in a missing folder: exit $rc, expected 2"
rc=0
"$good" "$tmp/nonexistent.json" 2>"$tmp/log" || rc=$?
[ $rc -eq 2 ] || fail "a missing scenario: exit $rc, expected 2"
rc=0
(cd "$share" && "$good" scenarios/redis_restart.json --out "$tmp/x.json") 2>"$tmp/log" || rc=$?
[ $rc -eq 2 ] && grep -q '/gates/0/kind' "$tmp/log" || fail "a lease scenario was not refused with its JSON path (exit $rc)"

# admitsim's own CLI refuses to replay a report of another core.
rc=0
"$cli" replay -q "$tmp/good.json" 2>"$tmp/log" || rc=$?
[ $rc -eq 2 ] && grep -q 'gate_core' "$tmp/log" || fail "admitsim replay of an own-core report: exit $rc, expected 2"
echo "own_gate: ring_gate passes scenario.json, 300 searched seeds and $ran catalogue scenarios; the broken copy is caught"
