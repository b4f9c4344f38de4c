#!/usr/bin/env bash
# The three verdicts at the command line: a run cut short is inconclusive on
# stderr and in the report, exits 1 whatever pass or violation the scenario
# expects, and 0 only when it expects "inconclusive"; check refuses what run
# would refuse. Usage: verdict_cli_test.sh BIN_DIR (run from the source root).
set -euo pipefail
bin="$1/admitsim"
name=verdict_cli_test
. "$(dirname "$0")/../cli/lib.sh"
scenario() {  # scenario FILE EXPECT: one request at 10s, a horizon of 1s
  printf '{"name": "cut", "gate": {"kind": "fifo", "max_active": 1}, "workload": {"requests": [{"at": "10s"}]},
  "checks": {"horizon": "1s"}, "expect": {"verdict": "%s"}}\n' "$2" >"$1"
}

for want in pass violation; do
  scenario "$tmp/$want.json" "$want"
  expect_rc 1 "$bin" run "$tmp/$want.json" --out "$tmp/$want-report.json"
  grep -q 'cut seed=1: inconclusive (NOT as expected)' "$tmp/err" || fail "summary line: $(cat "$tmp/err")"
  grep -q '  inconclusive (horizon): the run reached its horizon 1s' "$tmp/err" || fail "no reason line: $(cat "$tmp/err")"
  grep -q '"verdict": "inconclusive"' "$tmp/$want-report.json" || fail "report verdict"
  grep -q '"reason": "horizon"' "$tmp/$want-report.json" || fail "report reason"
done
scenario "$tmp/expected.json" inconclusive
expect_rc 0 "$bin" run "$tmp/expected.json" --out "$tmp/expected-report.json" --quiet
expect_rc 0 "$bin" replay "$tmp/expected-report.json" --quiet

# check runs the validation run does: a lease gate beside a FIFO gate is refused by both, before running.
printf '{"name": "mix", "gates": [{"name": "a", "kind": "lease", "limit": 1}, {"name": "b", "kind": "fifo", "max_active": 1}],
 "workload": {"requests": [{"gate": "b", "at": "0ms"}]}}\n' >"$tmp/mix.json"
expect_rc 2 "$bin" check "$tmp/mix.json"
grep -q '/gates/1: expected a lease gate to be the scenario.s only gate' "$tmp/err" || fail "check: $(cat "$tmp/err")"
expect_rc 2 "$bin" run "$tmp/mix.json" --out "$tmp/mix-report.json"
[ ! -e "$tmp/mix-report.json" ] || fail "a refused scenario wrote a report"
# explore: seeds whose runs a limit cut are counted, and the search is not a pass.
printf '{"name": "cut_budget", "gate": {"kind": "fifo", "max_active": 1},
 "workload": {"arrivals": [{"kind": "constant", "count": 50, "every": "10ms"}]}, "checks": {"max_events": 20}}\n' >"$tmp/budget.json"
expect_rc 1 "$bin" explore "$tmp/budget.json" --seeds 3 --jobs 1 --out "$tmp/ex" --quiet
grep -q '"seeds_inconclusive": 3' "$tmp/ex/cut_budget-explore.json" || fail "explore summary: $(cat "$tmp/ex/cut_budget-explore.json")"
grep -q '3 seeds could not finish (inconclusive' "$tmp/ex/cut_budget-explore.json" || fail "explore reason"
echo "verdict_cli_test: ok"
