#!/usr/bin/env bash
# Goal: every numeric option is decimal digits in its range, or exit 2 with one line naming the option and
# the range; explore never aborts on --jobs, and a search that runs no seed does not pass.
# Method: a table of bad values per option (signs, hex, empty, overflow, out of range); the largest seed
# and the --jobs bound accepted; --jobs 256 under a memory limit too small for 256 thread stacks; a shard
# that holds no seed of the range.
# Usage: numeric_options_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=numeric_options_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"
lab=scenarios/lab_fifo.json
steps=scenarios/explore_clock_steps.json
u64="an integer from 0 to 18446744073709551615"

bad() {  # bad MESSAGE ARGS...: exit 2, one line holding MESSAGE, nothing written
  local want="$1"; shift
  expect_rc 2 "$bin" "$@"
  one_line "$want"
  [ -z "$(ls "$tmp/w" 2>/dev/null)" ] || fail "a refused command wrote files: $*"
}
for v in -1 18446744073709551616 "" 0x10 " 5" +5 1e3 99999999999999999999999; do
  bad "--seed: expected $u64, got \"$v\"" run "$lab" --seed "$v" --out "$tmp/w/r.json"
done
bad "--seeds: expected an integer from 1 to 18446744073709551615, got \"-3\"" explore "$steps" --seeds -3 --out "$tmp/w"
bad "--seeds: expected an integer from 1 to 18446744073709551615, got \"0\"" explore "$steps" --seeds 0 --out "$tmp/w"
bad "--first-seed: expected $u64, got \"-1\"" explore "$steps" --first-seed -1 --out "$tmp/w"
for v in 0 257 1000 -1 0x2 ""; do
  bad "--jobs: expected an integer from 1 to 256, got \"$v\"" explore "$steps" --seeds 2 --jobs "$v" --out "$tmp/w"
done
bad "--shrink-max: expected an integer from 0 to 1000, got \"-1\"" explore "$steps" --shrink-max -1 --out "$tmp/w"
bad "--shrink-runs: expected an integer from 1 to 100000000, got \"1e3\"" explore "$steps" --shrink-runs 1e3 --out "$tmp/w"
bad "--max-delays: expected an integer from 0 to 1000000, got \"-1\"" explore "$steps" --exhaustive --max-delays -1 --out "$tmp/w"
bad "--max-orders: expected an integer from 1 to 18446744073709551615, got \"0x10\"" explore "$steps" --exhaustive --max-orders 0x10 --out "$tmp/w"
bad "--jobs: expected an integer from 1 to 256, got \"300\"" explore "$steps" --exhaustive --jobs 300 --out "$tmp/w"
bad "--shard: expected I/N" explore "$steps" --shard 1/-2 --out "$tmp/w"
bad "--shard: expected I/N" explore "$steps" --shard +1/2 --out "$tmp/w"

# What the option parser refuses is one line too, and so is an option that took the next option as its value.
bad "admitsim: explore: --seeds excludes --time" explore "$steps" --seeds 5 --time 1s --out "$tmp/w"
bad "admitsim: --seed: expected $u64, got \"--out\"" run "$lab" --seed --out "$tmp/w/r.json"

# In range: the largest seed runs as itself.
expect_rc 0 "$bin" run "$lab" --seed 18446744073709551615 --out "$tmp/max.json" --quiet
grep -q '"seed": 18446744073709551615' "$tmp/max.json" || fail "--seed 2^64-1 did not run seed 2^64-1"
expect_rc 0 "$bin" run "$lab" --seed 007 --out "$tmp/seven.json" --quiet
grep -q '"seed": 7,' "$tmp/seven.json" || fail "--seed 007 did not run seed 7"

# A shard that holds no seed of the range: said on stderr, exit 1.
expect_rc 1 "$bin" explore "$steps" --seeds 2 --shard 3/4 --out "$tmp/none" --quiet
grep -q 'no seed ran' "$tmp/err" || { cat "$tmp/err" >&2; fail "an empty shard did not say that no seed ran"; }

# Threads that cannot be started: one line and exit 2, never an abort (not under a sanitizer: see lib.sh).
if ! sanitized; then
  rc=0
  (ulimit -v 600000; exec timeout 60 "$bin" explore "$steps" --seeds 300 --jobs 256 --no-shrink --out "$tmp/threads") \
    >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq 2 ] || { cat "$tmp/err" >&2; fail "explore --jobs 256 without memory for the threads exited $rc"; }
  one_line "admitsim: --jobs: cannot start 256 threads"
fi
echo "$name: ok"
