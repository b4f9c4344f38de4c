#!/usr/bin/env bash
# admitsim explore at the command line: exit codes, the files it writes, that
# `admitsim run` reproduces a shrunk scenario and `admitsim replay` its report,
# and that the findings do not depend on --jobs or on sharding.
# Usage: explore_cli_test.sh BIN_DIR (run from the source root).
set -euo pipefail
bin="$1/admitsim"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "explore_cli_test: $*" >&2; exit 1; }
expect_rc() {  # expect_rc WANT CMD...
  local want="$1"; shift
  local rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "exit $rc, wanted $want: $*"; }
}

# A mutant: a counterexample (exit 1), shrunk to a file that run reproduces and whose report replays.
mutant=tests/explore/mutants/admit_off_by_one.json
expect_rc 1 "$bin" explore "$mutant" --seeds 8 --jobs 2 --out "$tmp/m" --quiet
min="$tmp/m/mutant_admit_off_by_one-seed0-min.json"
[ -f "$min" ] || fail "no minimal scenario $min"
[ -f "$tmp/m/mutant_admit_off_by_one-explore.json" ] || fail "no summary"
grep -q '"reproduced": true' "$tmp/m/mutant_admit_off_by_one-explore.json" || fail "summary does not say reproduced"
expect_rc 0 "$bin" run "$min" --out "$tmp/min-report.json" --quiet
grep -q '"verdict": "violation"' "$tmp/min-report.json" || fail "the minimal scenario did not break an invariant"
expect_rc 0 "$bin" replay "$tmp/m/mutant_admit_off_by_one-seed0-min.report.json" --quiet
expect_rc 0 "$bin" replay "$tmp/m/mutant_admit_off_by_one-seed0.report.json" --quiet

# The same mutant with the real gate: nothing found, exit 0.
sed 's/"mutation": "admit_off_by_one"/"mutation": "none"/' "$mutant" >"$tmp/control.json"
expect_rc 0 "$bin" explore "$tmp/control.json" --seeds 16 --out "$tmp/c" --quiet

# Bounds only: the expected violations show (exit 0), and the findings are the same bytes whatever --jobs.
steps=scenarios/explore_clock_steps.json
expect_rc 0 "$bin" explore "$steps" --seeds 40 --jobs 1 --out "$tmp/s" --quiet --shrink-max 1
cp "$tmp/s/explore_clock_steps-explore.json" "$tmp/jobs1.json"
expect_rc 0 "$bin" explore "$steps" --seeds 40 --jobs 3 --out "$tmp/s" --quiet --shrink-max 1
cmp -s "$tmp/jobs1.json" "$tmp/s/explore_clock_steps-explore.json" || fail "--jobs 1 and --jobs 3 disagree"

# Shards split the seeds: together they find what one search finds.
seeds_found() { grep -o '"seed": [0-9]*' "$1" | sort -t: -k2 -n; }
expect_rc 0 "$bin" explore "$steps" --seeds 40 --no-shrink --out "$tmp/all" --quiet
for i in 0 1 2; do
  rc=0
  "$bin" explore "$steps" --seeds 40 --shard "$i/3" --no-shrink --out "$tmp/shard$i" --quiet || rc=$?
  [ "$rc" -le 1 ] || fail "shard $i/3 exited $rc"
done
cat "$tmp"/shard*/explore_clock_steps-explore.json >"$tmp/shards.json"
[ "$(seeds_found "$tmp/all/explore_clock_steps-explore.json")" = "$(seeds_found "$tmp/shards.json")" ] ||
  fail "the shards found other seeds than the whole search"

# A time budget runs some seeds and stops.
expect_rc 0 "$bin" explore "$steps" --time 300ms --no-shrink --out "$tmp/t" --quiet
grep -q '"ran": [1-9]' "$tmp/t/explore_clock_steps-explore.json" || fail "--time ran no seed"

# Bad input: exit 2, one line.
expect_rc 2 "$bin" explore "$steps" --shard 3/3 --out "$tmp/x"
grep -q -- "--shard" "$tmp/err" || fail "no message for a bad shard"
expect_rc 2 "$bin" explore "$tmp/missing.json" --out "$tmp/x"
expect_rc 2 "$bin" explore "$steps" --seeds 5 --time 1s --out "$tmp/x"
expect_rc 2 "$bin" explore tests/scenario/malformed/zero_cap.json --out "$tmp/x"

# --until-bound: seeds until each variant broke or has the clean seeds a bound below P needs (59 at 5%),
# the same bytes on 1 and 2 threads, the evidence in the summary; bad shares and a cap below the need refused.
expect_rc 0 "$bin" explore "$steps" --until-bound 5% --jobs 1 --out "$tmp/u" --quiet --shrink-max 1
cp "$tmp/u/explore_clock_steps-explore.json" "$tmp/until1.json"
expect_rc 0 "$bin" explore "$steps" --until-bound 5% --jobs 2 --out "$tmp/u" --quiet --shrink-max 1
cmp -s "$tmp/until1.json" "$tmp/u/explore_clock_steps-explore.json" || fail "--until-bound: --jobs 1 and 2 disagree"
grep -q '"reached": true' "$tmp/until1.json" || fail "--until-bound did not reach its bound"
grep -q '"clean_seeds_needed": 59' "$tmp/until1.json" || fail "--until-bound 5% needs 59 clean seeds"
grep -q '"statement": "no violation in 59 seeds' "$tmp/until1.json" || fail "no evidence statement for the clean variant"
expect_rc 1 "$bin" explore "$steps" --until-bound 1% --time 1ms --out "$tmp/u" --quiet --no-shrink
grep -q "the bound did not fall below 1.0%" "$tmp/u/explore_clock_steps-explore.json" || fail "an unmet bound is not said"
for bad in 0% 51% abc 1e-2; do
  expect_rc 2 "$bin" explore "$steps" --until-bound "$bad" --out "$tmp/x"
  grep -q -- "--until-bound" "$tmp/err" || fail "no message for --until-bound $bad"
done
expect_rc 2 "$bin" explore "$steps" --until-bound 1% --seeds 100 --out "$tmp/x"
grep -q "expected at least 299" "$tmp/err" || fail "a cap below the seeds needed is not refused"
expect_rc 2 "$bin" explore "$steps" --until-bound 1% --shard 0/2 --out "$tmp/x"

# --search guided: the same summary for every --jobs; its first finding's replay command finds it
# again (the search up to it), and its explored scenario, written when shrunk, breaks under admitsim run.
faults=scenarios/explore_redis_faults.json
expect_rc 0 "$bin" explore "$faults" --search guided --seeds 30 --jobs 2 --out "$tmp/g1" --quiet --shrink-max 1
cp "$tmp/g1/explore_redis_faults-explore.json" "$tmp/guided-jobs2.json"
expect_rc 0 "$bin" explore "$faults" --search guided --seeds 30 --jobs 1 --out "$tmp/g1" --quiet --shrink-max 1
cmp -s "$tmp/guided-jobs2.json" "$tmp/g1/explore_redis_faults-explore.json" ||
  fail "a guided search's summary differs between --jobs 1 and --jobs 2"
grep -q '"mode": "guided"' "$tmp/g1/explore_redis_faults-explore.json" || fail "the summary does not name the guided search"
replay=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["shrunk"][0]["replay"])' "$tmp/g1/explore_redis_faults-explore.json")
case "$replay" in *"--search guided --first-seed 0 --seeds "*) ;; *) fail "a guided replay runs the search up to the seed, got: $replay" ;; esac
explored=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["shrunk"][0]["explored_scenario"])' "$tmp/g1/explore_redis_faults-explore.json")
rc=0
"$bin" run "$explored" --out "$tmp/g-explored.json" --quiet || rc=$?  # 1: a variant the search expects to break held here
[ "$rc" -le 1 ] || fail "admitsim run of a guided seed's explored scenario exited $rc"
grep -q '"verdict": "violation"' "$tmp/g-explored.json" || fail "a guided seed's explored scenario does not break under admitsim run"
# --search plain: the rates at their bounds, as admitsim run --seed draws them.
expect_rc 0 "$bin" explore "$faults" --search plain --seeds 20 --out "$tmp/p" --quiet --no-shrink
grep -q '"mode": "plain"' "$tmp/p/explore_redis_faults-explore.json" || fail "the summary does not name the plain search"
expect_rc 2 "$bin" explore "$faults" --search sideways --out "$tmp/x"
grep -q -- "--search" "$tmp/err" || fail "no message for an unknown --search"
expect_rc 2 "$bin" explore "$faults" --search guided --ties-only --out "$tmp/x"
# A guided search's shards are separate searches: merge refuses them.
for i in 0 1; do
  rc=0
  "$bin" explore "$faults" --search guided --seeds 8 --shard "$i/2" --out "$tmp/gs$i" --quiet --no-shrink || rc=$?
  [ "$rc" -le 1 ] || fail "guided shard $i/2 exited $rc"
done
expect_rc 2 "$bin" merge "$tmp/gs0/explore_redis_faults-explore.json" "$tmp/gs1/explore_redis_faults-explore.json" --out "$tmp/gm"
grep -q "guided" "$tmp/err" || fail "merge does not say why it refuses a guided search"

echo "explore_cli_test: ok"
