#!/usr/bin/env bash
# admitsim explore --exhaustive and --order at the command line: the real
# gate holds in every order of the handover race, the leaking mutant breaks
# in some, the summary is the same bytes on every run, a reported order
# replays with the exit code `run` would give, and bad input exits 2.
# Usage: explore_orders_cli_test.sh BIN_DIR (run from the source root).
set -euo pipefail
bin="$1/admitsim"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "explore_orders_cli_test: $*" >&2; exit 1; }
expect_rc() {  # expect_rc WANT CMD...
  local want="$1"; shift
  local rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "exit $rc, wanted $want: $*"; }
}
field() { grep -o "\"$1\": [0-9a-z]*" "$2" | head -1 | sed 's/.*: //'; }

race=scenarios/explore_handover_race.json
expect_rc 0 "$bin" explore "$race" --exhaustive --max-delays 100 --out "$tmp/real" --quiet
summary="$tmp/real/explore_handover_race-orders.json"
[ "$(field orders "$summary")" = 12 ] || fail "expected 12 orders of the race, got $(field orders "$summary")"
[ "$(field distinct_orderings "$summary")" = 12 ] || fail "the orders were not distinct"
[ "$(field complete "$summary")" = true ] || fail "the search did not complete"
[ "$(field violating_orders "$summary")" = 0 ] || fail "the real gate broke in some order"

# The same bytes again (no wall time in the file).
expect_rc 0 "$bin" explore "$race" --exhaustive --max-delays 100 --out "$tmp/again" --quiet
cmp -s "$summary" "$tmp/again/explore_handover_race-orders.json" || fail "two searches wrote different summaries"

# The leaking mutant breaks in 2 of the 12 orders, never in the default one (exit 1: a counterexample).
sed 's/"wait_deadline": "1s"}/"wait_deadline": "1s", "mutation": "leak_handover_on_cancel"}/' "$race" >"$tmp/mutant.json"
grep -q leak_handover_on_cancel "$tmp/mutant.json" || fail "could not make the mutant"
expect_rc 0 "$bin" run "$tmp/mutant.json" --out "$tmp/default.json" --quiet
expect_rc 1 "$bin" explore "$tmp/mutant.json" --exhaustive --max-delays 100 --out "$tmp/m" --quiet
msum="$tmp/m/explore_handover_race-orders.json"
[ "$(field violating_orders "$msum")" = 2 ] || fail "expected 2 violating orders, got $(field violating_orders "$msum")"
order="$(grep -o '"order": "[0-9:,]*"' "$msum" | head -1 | sed 's/.*: "//; s/"$//')"
[ -n "$order" ] || fail "no order in the summary"
# The reported order replays the violation (exit 1: not as expected); the default order passes (exit 0).
expect_rc 1 "$bin" explore "$tmp/mutant.json" --order "$order"
grep -q lease_released_once "$tmp/err" || fail "the replayed order did not break lease_released_once"
expect_rc 0 "$bin" explore "$tmp/mutant.json" --order ''
# The real gate in the same order holds.
expect_rc 0 "$bin" explore "$race" --order "$order"

# A delay bound of 0 is the default order alone.
expect_rc 0 "$bin" explore "$tmp/mutant.json" --exhaustive --max-delays 0 --out "$tmp/z" --quiet
[ "$(field orders "$tmp/z/explore_handover_race-orders.json")" = 1 ] || fail "--max-delays 0 ran more than one order"

# A lease scenario: one enumeration per variant, the same bytes whatever --jobs; --order needs --variant.
expect_rc 0 "$bin" explore scenarios/crashed_holder.json --exhaustive --max-delays 1 --jobs 1 --out "$tmp/l" --quiet
[ "$(grep -c '"variant": "' "$tmp/l/crashed_holder-orders.json")" = 2 ] || fail "expected two variants"
expect_rc 0 "$bin" explore scenarios/crashed_holder.json --exhaustive --max-delays 1 --jobs 3 --out "$tmp/l3" --quiet
cmp -s "$tmp/l/crashed_holder-orders.json" "$tmp/l3/crashed_holder-orders.json" || fail "--jobs 1 and --jobs 3 disagree"
expect_rc 2 "$bin" explore scenarios/crashed_holder.json --order ''
grep -q "name one of its variants" "$tmp/err" || fail "no message for a missing --variant"
expect_rc 0 "$bin" explore scenarios/crashed_holder.json --order '' --variant server_time

# Bad input: exit 2 and a message.
expect_rc 2 "$bin" explore "$race" --order 'x'
grep -q "POINT:CHOICE" "$tmp/err" || fail "no message for a malformed order"
expect_rc 2 "$bin" explore "$race" --order '0:9'
grep -q "candidates" "$tmp/err" || fail "no message for a choice beyond the candidates"
expect_rc 2 "$bin" explore "$race" --order '5000:1'
grep -q "does not fit" "$tmp/err" || fail "no message for a point the run does not reach"
expect_rc 2 "$bin" explore "$race" --exhaustive --seeds 3
expect_rc 2 "$bin" explore "$race" --max-delays 3
expect_rc 2 "$bin" explore "$race" --exhaustive --first-seed 3
expect_rc 2 "$bin" explore "$race" --order '' --shard 0/2
expect_rc 2 "$bin" explore "$race" --exhaustive --max-orders 0 --out "$tmp/x"
# A cut enumeration is no pass: exit 1, inconclusive, the summary not complete.
expect_rc 1 "$bin" explore "$race" --exhaustive --max-orders 2 --out "$tmp/cut" --quiet
grep -q '"complete": false' "$tmp/cut/"*-orders.json || fail "a cut enumeration says it is complete"
grep -q "inconclusive" "$tmp/cut/"*-orders.json || fail "a cut enumeration does not say why it is no pass"
expect_rc 2 "$bin" explore "$race" --order '' --variant seed
# --placements: every placement of the scenario's one failover. The unacknowledged variants break as
# the scenario expects and WAIT's holds for every placement (exit 0); the first violating placement
# is a scenario admitsim run breaks.
fo=scenarios/redis_failover.json
expect_rc 0 "$bin" explore "$fo" --placements --jobs 2 --out "$tmp/pl"
grep -q "runs of wait_ack: held for every placement of 1 redis_failover" "$tmp/err" || fail "no statement of every placement"
grep -q '"mode": "placements"' "$tmp/pl/redis_failover-placements.json" || fail "the summary does not name its mode"
# The same summary for any --jobs (a FIFO crash's 15 placements, cheap under the sanitizers too).
crash=scenarios/fifo_crash_restart.json
expect_rc 0 "$bin" explore "$crash" --placements --jobs 2 --out "$tmp/pc" --quiet
cp "$tmp/pc/fifo_crash_restart-placements.json" "$tmp/placements-jobs2.json"
expect_rc 0 "$bin" explore "$crash" --placements --jobs 1 --out "$tmp/pc" --quiet
cmp -s "$tmp/placements-jobs2.json" "$tmp/pc/fifo_crash_restart-placements.json" || fail "--placements differs between --jobs 1 and 2"
expect_rc 0 "$bin" run "$tmp/pl/redis_failover-seed-placed.json" --out "$tmp/placed.json" --quiet
grep -q '"verdict": "violation"' "$tmp/placed.json" || fail "the first violating placement does not break under admitsim run"
# A cut search is no statement about every placement: exit 1, inconclusive.
expect_rc 1 "$bin" explore "$fo" --placements --max-placements 10 --out "$tmp/pl" --quiet
grep -q '"complete": false' "$tmp/pl/redis_failover-placements.json" || fail "a cut search says it is complete"
# Refused: rates (a seed search's), no scheduled fault, a seed option.
expect_rc 2 "$bin" explore scenarios/explore_clock_steps.json --placements --out "$tmp/x"
grep -q "/faults/rates" "$tmp/err" || fail "no message for --placements on rates"
expect_rc 2 "$bin" explore scenarios/lab_fifo.json --placements --out "$tmp/x"
grep -q "/faults/schedule" "$tmp/err" || fail "no message for --placements without a fault"
expect_rc 2 "$bin" explore "$fo" --placements --seeds 3
expect_rc 2 "$bin" explore "$fo" --max-placements 3
expect_rc 2 "$bin" explore "$fo" --placements --max-placements 0 --out "$tmp/x"
echo "explore_orders_cli_test: ok"
