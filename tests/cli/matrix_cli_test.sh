#!/usr/bin/env bash
# admitsim matrix (docs/matrix.md). Goal: a matrix file is refused with the JSON path of what is wrong
# (exit 2, before anything runs); a small matrix runs, breaks where the design cannot hold, writes a
# counterexample that admitsim run reproduces, comes out byte-identical for every --jobs, and writes
# JUnit that fits tests/reports/junit.xsd and whose counts agree with the summary. Method: small files written here, run through
# the command.
set -euo pipefail
bin="$1/admitsim"
name=matrix_cli
. "$(dirname "$0")/lib.sh"

# A small base: 4 workers share 2 permits; one worker's clock runs 20s ahead in the clock_skew column.
cat >"$tmp/base.json" <<'J'
{"name": "small_base", "gate": {"kind": "lease", "limit": 2, "lease": "10s"}, "fleet": {"workers": 4},
 "service": {"portal_cap": 2, "service_time": {"kind": "uniform", "min": "1s", "max": "3s"}, "client_timeout": "20s"},
 "workload": {"arrivals": [{"kind": "constant", "count": 30, "every": "250ms"}]}}
J
write_matrix() {  # write_matrix FILE DESIGNS FAULTS [EXTRA_TOP_LEVEL]
  printf '{"format": "admitsim-matrix/1", "name": "small", "scenario": "base.json", "seeds": 6,%s\n "designs": %s,\n "faults": %s}\n' \
    "${4:-}" "$2" "$3" >"$1"
}
designs='[{"name": "seed", "variant": "seed", "breaks": ["clock_skew", "all_faults"], "holds": ["none"]},
           {"name": "server_time", "variant": "server_time", "holds": ["*"]}]'
faults='[{"name": "clock_skew", "faults": {"schedule": [{"at": "0ms", "kind": "clock_step", "target": "worker:0", "step": "+20s"}]}},
          {"name": "partition", "faults": {"rates": {"partition_per_hour": 240, "mean_duration": "2s", "until": "20s"}}}]'
write_matrix "$tmp/m.json" "$designs" "$faults"
plain='[{"name": "seed", "variant": "seed"}]'

# --- refusals: one line, exit 2, the JSON path --------------------------------------------------------
refused() {  # refused TEXT MATRIX_DESIGNS MATRIX_FAULTS [EXTRA]
  write_matrix "$tmp/bad.json" "$2" "$3" "${4:-}"
  expect_rc 2 "$bin" matrix "$tmp/bad.json" --out "$tmp/bad-out" --jobs 1
  one_line "$1"
  [ ! -e "$tmp/bad-out/small-matrix.json" ] || fail "a refused matrix wrote a summary"
}
refused '/colour: unknown key; expected one of:' "$designs" "$faults" ' "colour": "blue",'
refused '/designs/0/varient: unknown key' '[{"name": "x", "varient": "seed"}]' "$faults"
refused '/designs: expected a list of 1 to 64 designs, got []' '[]' "$faults"
refused '/designs/1/name: expected a design name not used by another row, got "a"' \
  '[{"name": "a", "variant": "seed"}, {"name": "a", "variant": "server_time"}]' "$faults"
refused '/faults/1/name: expected a fault column name not used by another column' "$plain" \
  '[{"name": "p", "faults": {}}, {"name": "p", "faults": {}}]'
refused '/faults/0/name: expected a name other than "none" and "all_faults"' "$plain" '[{"name": "none", "faults": {}}]'
refused '/designs/0: expected exactly one of "variant"' '[{"name": "x"}]' "$faults"
refused '/designs/0/protocol: ' '[{"name": "x", "protocol": "no/such/protocol.json"}]' "$faults"
refused '/designs/0/gate/variant: expected no "variant" here' '[{"name": "x", "variant": "seed", "gate": {"variant": "fair"}}]' "$faults"
refused '/designs/0: with the base scenario, the design'"'"'s scenario is refused: /gate/variant:' '[{"name": "x", "variant": "sed"}]' "$faults"
refused '/faults/0/faults/rates/crash_per_day: unknown key' "$plain" '[{"name": "c", "faults": {"rates": {"crash_per_day": 1, "until": "10s"}}}]'
refused '/designs/0/holds/0: expected a column of this matrix (none, clock_skew, partition, all_faults) or "*", got "skew"' \
  '[{"name": "x", "variant": "seed", "holds": ["skew"]}]' "$faults"
refused '/faults/1/faults/rates/until: cannot be combined with /faults/0/faults/rates/until into the column "all_faults"' "$plain" \
  '[{"name": "a", "faults": {"rates": {"crash_per_hour": 60, "until": "10s"}}}, {"name": "b", "faults": {"rates": {"pause_per_hour": 60, "until": "20s"}}}]'
write_matrix "$tmp/bad.json" "$designs" "$faults"
sed -i 's/"base.json"/"missing.json"/' "$tmp/bad.json"
expect_rc 2 "$bin" matrix "$tmp/bad.json" --out "$tmp/bad-out"
one_line "bad.json: /scenario: "
grep -q 'missing.json' "$tmp/err" || fail "the missing base scenario is not named: $(cat "$tmp/err")"
printf '{"format": "admitsim-matrix/2"}' >"$tmp/bad.json"
expect_rc 2 "$bin" matrix "$tmp/bad.json"
one_line '/format: expected "admitsim-matrix/1", got "admitsim-matrix/2"'
sed 's/"name": "small_base", "gate": {"kind": "lease", "limit": 2, "lease": "10s"}, "fleet": {"workers": 4},/"name": "f", "gate": {"kind": "fifo", "max_active": 2},/' \
  "$tmp/base.json" >"$tmp/fifo.json"
write_matrix "$tmp/bad.json" "$designs" "$faults"
sed -i 's/"base.json"/"fifo.json"/' "$tmp/bad.json"
expect_rc 2 "$bin" matrix "$tmp/bad.json"
grep -q '/scenario: ' "$tmp/err" || fail "a FIFO base is not refused at /scenario: $(cat "$tmp/err")"
expect_rc 2 "$bin" matrix "$tmp/m.json" --seeds 0
one_line '--seeds: expected an integer from 1 to 1000000, got "0"'
expect_rc 2 "$bin" matrix "$tmp/m.json" --out "$tmp/o" --html "$tmp/no/such/dir/m.html"
one_line "no such folder"
[ ! -e "$tmp/o/small-matrix.json" ] || fail "an output path refused after the run"

# --- a run --------------------------------------------------------------------------------------------
expect_rc 0 "$bin" matrix "$tmp/m.json" --out "$tmp/o1" --jobs 1 --html "$tmp/o1/m.html" --junit "$tmp/o1/m.xml"
s="$tmp/o1/small-matrix.json"
grep -q '"format": "admitsim-matrix/1"' "$s" || fail "no format tag"
grep -q '"cells": 8,' "$s" || fail "expected 2 designs x 4 columns: $(grep -A6 '"totals"' "$s")"
# The seed design breaks under a clock 20s ahead; its counterexample reproduces under admitsim run.
ce="$(grep -o '"scenario": "[^"]*seed\.clock_skew-seed[0-9]*[^"]*\.json"' "$s" | head -1 | sed 's/"scenario": "//; s/"$//')"
[ -n "$ce" ] && [ -f "$ce" ] || fail "no counterexample file for seed x clock_skew"
expect_rc 0 "$bin" run "$ce" --out "$tmp/replayed.json"
grep -q '"verdict": "violation"' "$tmp/replayed.json" || fail "the counterexample does not break under admitsim run"
grep -q 'seed.clock_skew' "$tmp/o1/m.html" || fail "the HTML table has no link to the counterexample"
grep -q 'class="cell breaks' "$tmp/o1/m.html" || fail "the HTML table shows no broken cell"

# --- JUnit: well-formed, its counts those of its test cases and of the summary ------------------------
x="$tmp/o1/m.xml"
xmllint --noout "$x" || fail "the JUnit file is not well-formed XML"
xmllint --noout --schema tests/reports/junit.xsd "$x" 2>"$tmp/xsd" || { cat "$tmp/xsd" >&2; fail "the JUnit file does not fit tests/reports/junit.xsd"; }
cases="$(xmllint --xpath 'count(//testcase)' "$x")"
failures="$(xmllint --xpath 'count(//testcase/failure)' "$x")"
errors="$(xmllint --xpath 'count(//testcase/error)' "$x")"
[ "$cases" = "$(xmllint --xpath 'string(/testsuites/@tests)' "$x")" ] || fail "tests= is not the number of test cases"
[ "$failures" = "$(xmllint --xpath 'string(/testsuites/@failures)' "$x")" ] || fail "failures= is not the number of failures"
[ "$errors" = "$(xmllint --xpath 'string(/testsuites/@errors)' "$x")" ] || fail "errors= is not the number of errors"
[ "$cases" = 8 ] || fail "expected 8 test cases, got $cases"
breaks="$(grep -o '"breaks": [0-9]*' "$s" | head -1 | grep -o '[0-9]*$')"
[ "$failures" = "$breaks" ] || fail "$failures failures but the summary counts $breaks broken cells"
for suite in $(xmllint --xpath '//testsuite/@name' "$x" | grep -o '"[^"]*"' | tr -d '"'); do
  n="$(xmllint --xpath "count(//testsuite[@name='$suite']/testcase)" "$x")"
  [ "$n" = "$(xmllint --xpath "string(//testsuite[@name='$suite']/@tests)" "$x")" ] || fail "suite $suite: tests= is not its cases"
done
[ "$(xmllint --xpath 'string(//testcase[@classname="small.seed"][@name="clock_skew"]/failure/@message)' "$x" | head -c 22)" \
  = "portal_inflight_le_cap" ] || fail "seed x clock_skew: the failure does not carry its first violation"
xmllint --xpath 'string(//testcase[@classname="small.seed"][@name="clock_skew"]/failure)' "$x" | grep -q 'replay: admitsim run ' \
  || fail "the failure does not carry the replay command"

# --- the same bytes for every --jobs ------------------------------------------------------------------
mkdir -p "$tmp/keep"
cp -r "$tmp/o1" "$tmp/keep/j1"
rm -rf "$tmp/o1"
expect_rc 0 "$bin" matrix "$tmp/m.json" --out "$tmp/o1" --jobs 3 --html "$tmp/o1/m.html" --junit "$tmp/o1/m.xml"
rm -f "$tmp/o1/.admitsim-explore.lock" "$tmp/keep/j1/.admitsim-explore.lock"
diff -r "$tmp/keep/j1" "$tmp/o1" >&2 || fail "--jobs 1 and --jobs 3 wrote different files"

# --- expectations: a cell not as expected is exit 1 ---------------------------------------------------
write_matrix "$tmp/m2.json" '[{"name": "seed", "variant": "seed", "holds": ["clock_skew"]}]' "$faults"
expect_rc 1 "$bin" matrix "$tmp/m2.json" --out "$tmp/o2" --jobs 2
grep -q 'not as expected: 1 cells not as the matrix file expects (the first: seed x clock_skew breaks, expected to hold)' "$tmp/err" \
  || fail "exit 1 without its reason: $(cat "$tmp/err")"

# --- a cell cut by a limit is inconclusive: never shown as holding, exit 1, a JUnit error ---------------
sed 's/"workload"/"checks": {"max_events": 40}, "workload"/' "$tmp/base.json" >"$tmp/cut.json"
write_matrix "$tmp/m3.json" '[{"name": "server_time", "variant": "server_time"}]' '[]'
sed -i 's/"base.json"/"cut.json"/' "$tmp/m3.json"
expect_rc 1 "$bin" matrix "$tmp/m3.json" --out "$tmp/o3" --jobs 2 --junit "$tmp/o3/m.xml"
grep -q '"status": "inconclusive"' "$tmp/o3/small-matrix.json" || fail "a cut cell is not inconclusive"
grep -q '"reason": "event_budget"' "$tmp/o3/small-matrix.json" || fail "the cut cell does not say why"
[ "$(xmllint --xpath 'count(//testcase/error)' "$tmp/o3/m.xml")" = 1 ] || fail "the inconclusive cell is not a JUnit error"
xmllint --noout --schema tests/reports/junit.xsd "$tmp/o3/m.xml" 2>"$tmp/xsd" || { cat "$tmp/xsd" >&2; fail "the JUnit file of an inconclusive cell does not fit tests/reports/junit.xsd"; }

# --- --until-bound: the seeds a cell needs for its bound to fall below P (5 at 50%), said with the evidence
expect_rc 0 "$bin" matrix "$tmp/m.json" --out "$tmp/o4" --jobs 2 --until-bound 50% --markdown "$tmp/o4/m.md"
grep -q '"count": 5' "$tmp/o4/small-matrix.json" || fail "--until-bound 50% did not run 5 seeds a cell"
grep -q '"statement": "no violation in 5 seeds' "$tmp/o4/small-matrix.json" || fail "a cell that held states no evidence"
grep -q 'held in 5 (≤45.1%)' "$tmp/o4/m.md" || fail "the Markdown cell does not say what it held in: $(head -3 "$tmp/o4/m.md")"
expect_rc 2 "$bin" matrix "$tmp/m.json" --until-bound 1% --seeds 300
expect_rc 2 "$bin" matrix "$tmp/m.json" --until-bound 0.6
one_line '--until-bound: expected a share from 0.001% to 50% such as "1%" or "0.01", got "0.6"'
echo "$name: ok"
