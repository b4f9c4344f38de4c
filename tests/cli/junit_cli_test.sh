#!/usr/bin/env bash
# admitsim run --junit and explore --junit (docs/ci.md). Goal: the JUnit files fit tests/reports/junit.xsd,
# their counts are their test cases', a case passes exactly when the run (or the search) is as expected,
# a cut run is an <error>, a failure carries its first violation, cause and replay command, the bytes do
# not depend on --jobs, and bad paths are refused before anything runs. Method: catalogue scenarios and
# copies edited here (a wrong expectation, a tiny event budget), run through the command; the schema is
# also shown two broken documents it must refuse.
set -euo pipefail
bin="$1/admitsim"
name=junit_cli
. "$(dirname "$0")/lib.sh"
xsd=tests/reports/junit.xsd

fits() {  # fits FILE: valid against the schema
  xmllint --noout --schema "$xsd" "$1" 2>"$tmp/xsd" || { cat "$tmp/xsd" >&2; fail "$1 does not fit $xsd"; }
}
count() { xmllint --xpath "$1" "$2"; }
# counts FILE TESTS FAILURES ERRORS: the document's attributes, its cases, and each suite's attributes its own cases.
counts() {
  local f="$1"
  [ "$(count 'count(//testcase)' "$f")" = "$2" ] || fail "$f: expected $2 test cases, got $(count 'count(//testcase)' "$f")"
  [ "$(count 'count(//testcase/failure)' "$f")" = "$3" ] || fail "$f: expected $3 failures, got $(count 'count(//testcase/failure)' "$f")"
  [ "$(count 'count(//testcase/error)' "$f")" = "$4" ] || fail "$f: expected $4 errors, got $(count 'count(//testcase/error)' "$f")"
  [ "$(count 'string(/testsuites/@tests)' "$f")" = "$2" ] || fail "$f: tests= is not the number of test cases"
  [ "$(count 'string(/testsuites/@failures)' "$f")" = "$3" ] || fail "$f: failures= is not the number of failures"
  [ "$(count 'string(/testsuites/@errors)' "$f")" = "$4" ] || fail "$f: errors= is not the number of errors"
  local n i
  n="$(count 'count(//testsuite)' "$f")"
  for i in $(seq "$n"); do
    for what in "testcase:tests" "testcase/failure:failures" "testcase/error:errors"; do
      [ "$(count "count(//testsuite[$i]/${what%%:*})" "$f")" = "$(count "string(//testsuite[$i]/@${what##*:})" "$f")" ] \
        || fail "$f: suite $i: ${what##*:}= is not its cases'"
    done
  done
}

# --- the schema refuses what CI readers would misread -------------------------------------------------
good='<testsuites name="a" tests="1" failures="1" errors="0" skipped="0"><testsuite name="s" tests="1" failures="1" errors="0" skipped="0">'
printf '%s<testcase classname="s" name="c"><failure message="m">t</failure><system-out>o</system-out></testcase></testsuite></testsuites>\n' "$good" >"$tmp/ok.xml"
fits "$tmp/ok.xml"
printf '%s<testcase classname="s" name="c"><failure message="m"/><failure message="n"/></testcase></testsuite></testsuites>\n' "$good" >"$tmp/two.xml"
printf '%s<testcase classname="s"><failure message="m"/></testcase></testsuite></testsuites>\n' "$good" >"$tmp/noname.xml"
printf '%s<testcase classname="s" name="c"><error message="m"/><failure message="m"/></testcase></testsuite></testsuites>\n' "$good" >"$tmp/both.xml"
sed 's/tests="1" failures="1" errors="0" skipped="0"><testsuite/failures="1" errors="0" skipped="0"><testsuite/' "$tmp/ok.xml" >"$tmp/nocount.xml"
for bad in two noname both nocount; do
  if xmllint --noout --schema "$xsd" "$tmp/$bad.xml" 2>/dev/null; then fail "the schema accepts $bad.xml"; fi
done

# --- the scenarios: a FIFO pass, a lease scenario with an expected violation, a wrong expectation, a cut run --
cp scenarios/fifo_stall.json "$tmp/fifo.json"
cp scenarios/clock_skew.json "$tmp/skew.json"
# The seed variant expected to pass: its violation is a failure.
sed -e 's/"name": "clock_skew"/"name": "skew_wrong"/' \
    -e 's/"seed": {"verdict": "violation", "violated": \["portal_inflight_le_cap"\]}/"seed": {"verdict": "pass"}/' \
    scenarios/clock_skew.json >"$tmp/wrong.json"
grep -q '"seed": {"verdict": "pass"}' "$tmp/wrong.json" || fail "the wrong copy was not made"
# 50 events: every run is cut before it ends (inconclusive), and judged nothing.
sed -e 's/"name": "clock_skew"/"name": "skew_cut"/' -e 's/"workload"/"checks": {"max_events": 50}, "workload"/' \
    scenarios/clock_skew.json >"$tmp/cut.json"

# Each alone: the exit code and the cases agree.
expect_rc 0 "$bin" run "$tmp/fifo.json" --out-dir "$tmp/o" --junit "$tmp/fifo.xml" --quiet
fits "$tmp/fifo.xml"
counts "$tmp/fifo.xml" 1 0 0
[ "$(count 'string(//testcase/@name)' "$tmp/fifo.xml")" = fifo_stall ] || fail "the FIFO case is not named after its scenario"
expect_rc 0 "$bin" run "$tmp/skew.json" --out-dir "$tmp/o" --junit "$tmp/skew.xml" --quiet
fits "$tmp/skew.xml"
counts "$tmp/skew.xml" 2 0 0
count 'string(//testcase[@name="seed"]/system-out)' "$tmp/skew.xml" | grep -q '^first violation: portal_inflight_le_cap at ' \
  || fail "the expected violation is not in system-out"
expect_rc 1 "$bin" run "$tmp/wrong.json" --out-dir "$tmp/o" --junit "$tmp/wrong.xml" --quiet
fits "$tmp/wrong.xml"
counts "$tmp/wrong.xml" 2 1 0
f="$(count 'string(//testcase[@name="seed"]/failure)' "$tmp/wrong.xml")"
grep -q '^first violation: portal_inflight_le_cap at [0-9]*ns' <<<"$f" || fail "the failure does not name its first violation: $f"
grep -q '^cause: caller_clock_skew: ' <<<"$f" || fail "the failure does not name its cause: $f"
grep -qxF "replay: admitsim run $tmp/wrong.json --seed 11" <<<"$f" || fail "the failure does not hold the replay command: $f"
grep -qF "\"replay\": \"admitsim run $tmp/wrong.json --seed 11\"" "$tmp/o/skew_wrong-seed11.json" \
  || fail "the replay command is not the report's"
count 'string(//testcase[@name="seed"]/failure/@message)' "$tmp/wrong.xml" | grep -q '^expected pass, got violation: portal_inflight_le_cap broke at ' \
  || fail "the failure's message does not say what was expected and what broke"
expect_rc 1 "$bin" run "$tmp/cut.json" --out-dir "$tmp/o" --junit "$tmp/cut.xml" --quiet
fits "$tmp/cut.xml"
counts "$tmp/cut.xml" 2 0 2
count 'string(//testcase[@name="server_time"]/error/@message)' "$tmp/cut.xml" | grep -q '^inconclusive (event_budget): ' \
  || fail "a cut run is not an error that says why"

# All four in one run: one suite per scenario file, in command-line order, the same cases.
expect_rc 1 "$bin" run "$tmp/fifo.json" "$tmp/skew.json" "$tmp/wrong.json" "$tmp/cut.json" --out-dir "$tmp/o" \
  --junit "$tmp/all.xml" --quiet
fits "$tmp/all.xml"
counts "$tmp/all.xml" 7 1 2
[ "$(count 'count(//testsuite)' "$tmp/all.xml")" = 4 ] || fail "expected 4 suites"
[ "$(count 'string(//testsuite[3]/@name)' "$tmp/all.xml")" = skew_wrong ] || fail "the suites are not in command-line order"
grep -q 'timestamp=\|time=' "$tmp/all.xml" && fail "the JUnit file holds a time"
# '-' is standard output, as for --out.
expect_rc 0 "$bin" run "$tmp/fifo.json" --out "$tmp/o/f.json" --junit - --quiet
cmp -s "$tmp/out" "$tmp/fifo.xml" || fail "--junit - did not write the same file to stdout"

# --- explore ------------------------------------------------------------------------------------------
expect_rc 0 "$bin" explore "$tmp/skew.json" --seeds 4 --jobs 1 --out "$tmp/e1" --junit "$tmp/e1.xml" --quiet
fits "$tmp/e1.xml"
counts "$tmp/e1.xml" 2 0 0
count 'string(//testcase[@name="seed"]/system-out)' "$tmp/e1.xml" | grep -q '^expected violation shown first: seed 0, portal_inflight_le_cap' \
  || fail "an expected violation is not a pass with its seed in system-out"
expect_rc 0 "$bin" explore "$tmp/skew.json" --seeds 4 --jobs 2 --out "$tmp/e2" --junit "$tmp/e2.xml" --quiet
sed "s|$tmp/e2/|$tmp/e1/|g" "$tmp/e2.xml" | cmp -s - "$tmp/e1.xml" || fail "--jobs 1 and --jobs 2 wrote different JUnit files"

expect_rc 1 "$bin" explore "$tmp/wrong.json" --seeds 4 --jobs 2 --out "$tmp/e3" --junit "$tmp/e3.xml" --quiet
fits "$tmp/e3.xml"
counts "$tmp/e3.xml" 2 1 0
f="$(count 'string(//testcase[@name="seed"]/failure)' "$tmp/e3.xml")"
grep -q '^first counterexample (4 seeds): seed 0, portal_inflight_le_cap at [0-9]*ns' <<<"$f" || fail "the counterexample is not named: $f"
grep -q '^cause: caller_clock_skew: ' <<<"$f" || fail "the counterexample's cause is not named: $f"
grep -qxF "replay: admitsim explore $tmp/wrong.json --first-seed 0 --seeds 1" <<<"$f" || fail "no replay command: $f"
grep -qxF "replay the seed's scenario: admitsim run $tmp/e3/skew_wrong-seed0.scenario.json" <<<"$f" \
  || fail "no command that replays the seed's scenario: $f"
[ -f "$tmp/e3/skew_wrong-seed0.scenario.json" ] || fail "the seed's scenario named in the failure is not there"
# --no-shrink: no scenario file to name, the summary's replay command still.
expect_rc 1 "$bin" explore "$tmp/wrong.json" --seeds 2 --no-shrink --out "$tmp/e4" --junit "$tmp/e4.xml" --quiet
fits "$tmp/e4.xml"
count 'string(//testcase[@name="seed"]/failure)' "$tmp/e4.xml" | grep -q 'seed.s scenario' && fail "--no-shrink names a file it did not write"
# The expected violation that no seed shows is a failure: the cut copy's seed variant, whose runs are also
# cut (inconclusive), which makes every case an error.
expect_rc 1 "$bin" explore "$tmp/cut.json" --seeds 3 --out "$tmp/e5" --junit "$tmp/e5.xml" --quiet
fits "$tmp/e5.xml"
counts "$tmp/e5.xml" 2 0 2
count 'string(//testcase[@name="server_time"]/error/@message)' "$tmp/e5.xml" | grep -q '^3 seeds could not finish (inconclusive)' \
  || fail "cut runs are not an error that says so"
# A shard with no seed: no pass.
expect_rc 1 "$bin" explore "$tmp/skew.json" --seeds 1 --shard 1/2 --out "$tmp/e6" --junit "$tmp/e6.xml" --quiet
fits "$tmp/e6.xml"
counts "$tmp/e6.xml" 2 0 2
# Expected a violation of the server_time variant too: no seed shows it, a failure.
sed -e 's/"server_time": {"verdict": "pass"}/"server_time": {"verdict": "violation"}/' "$tmp/skew.json" >"$tmp/unshown.json"
expect_rc 1 "$bin" explore "$tmp/unshown.json" --seeds 2 --out "$tmp/e7" --junit "$tmp/e7.xml" --quiet
fits "$tmp/e7.xml"
counts "$tmp/e7.xml" 2 1 0
count 'string(//testcase[@name="server_time"]/failure/@message)' "$tmp/e7.xml" | grep -q '^expected violation, but no seed of 2 showed it' \
  || fail "an expected violation no seed showed is not a failure"

# Across the catalogue's explore scenarios and the copies above: exit 1 exactly when some case is not a pass.
for f in scenarios/explore_*.json "$tmp/skew.json" "$tmp/wrong.json" "$tmp/cut.json" "$tmp/unshown.json"; do
  rc=0
  timeout 60 "$bin" explore "$f" --seeds 3 --jobs 2 --out "$tmp/agree" --junit "$tmp/agree.xml" --quiet 2>/dev/null || rc=$?
  fits "$tmp/agree.xml"
  bad="$(count 'count(//testcase/failure | //testcase/error)' "$tmp/agree.xml")"
  { [ "$rc" = 0 ] && [ "$bad" = 0 ]; } || { [ "$rc" = 1 ] && [ "$bad" != 0 ]; } \
    || fail "explore $f exited $rc with $bad cases not a pass"
done

# SIGINT stops the search: every case an error that says so, none a pass.
interrupt "$tmp/i.out" "$tmp/i.err" explore "$tmp/skew.json" --seeds 100000000 --jobs 2 --no-shrink --out "$tmp/e9" \
  --junit "$tmp/e9.xml" --quiet
[ "$rc" = 1 ] || fail "an interrupted search exited $rc, not 1"
fits "$tmp/e9.xml"
counts "$tmp/e9.xml" 2 0 2
count 'string(//testcase[@name="seed"]/error/@message)' "$tmp/e9.xml" | grep -q '^interrupted by SIGINT after [0-9]* seeds' \
  || fail "an interrupted search's cases do not say so"

# --- refusals before anything runs: one line, exit 2 --------------------------------------------------
expect_rc 2 "$bin" run "$tmp/fifo.json" --out "$tmp/same.json" --junit "$tmp/same.json"
one_line "admitsim: --junit: expected a file of its own, got the path of the report of $tmp/fifo.json"
[ ! -e "$tmp/same.json" ] || fail "a refused run wrote its report"
expect_rc 2 "$bin" run "$tmp/fifo.json" --out "$tmp/o/x.json" --html "$tmp/o/x.html" --junit "$tmp/o/x.html"
one_line "admitsim: --junit: expected a file of its own, got the path of the HTML report of"
expect_rc 2 "$bin" run "$tmp/fifo.json" --out - --junit -
one_line "admitsim: --junit: expected a file of its own"
expect_rc 2 "$bin" run "$tmp/fifo.json" --out "$tmp/o/y.json" --trace "$tmp/o/t.jsonl" --junit "$tmp/o/t.jsonl"
one_line "--junit"
expect_rc 2 "$bin" run "$tmp/fifo.json" --out "$tmp/o/z.json" --junit "$tmp/missing/j.xml"
one_line "admitsim: $tmp/missing/j.xml: "
[ ! -e "$tmp/o/z.json" ] || fail "a refused run wrote its report"
expect_rc 2 "$bin" explore "$tmp/skew.json" --seeds 1 --out "$tmp/e8" --junit "$tmp/e8/clock_skew-explore.json"
one_line "admitsim: --junit: expected a file of its own, got the path of the summary"
expect_rc 2 "$bin" explore "$tmp/skew.json" --seeds 1 --out "$tmp/e8" --junit "$tmp/e8/clock_skew-seed0.scenario.json"
one_line "admitsim: --junit: expected a path that is none of the search's files"
expect_rc 2 "$bin" explore "$tmp/skew.json" --exhaustive --out "$tmp/e8" --junit "$tmp/e8.xml"
one_line "--junit"
expect_rc 2 "$bin" explore "$tmp/skew.json" --seeds 1 --out "$tmp/e8" --junit "$tmp/missing/j.xml"
one_line "admitsim: $tmp/missing/j.xml: "
[ ! -e "$tmp/e8/clock_skew-explore.json" ] || fail "a refused search wrote its summary"
echo "$name: ok"
