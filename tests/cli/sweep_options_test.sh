#!/usr/bin/env bash
# admitsim sweep's bad options and values: each is exit 2 with one line naming the option (or the file
# and the JSON path, for a value the loader refuses), before anything runs or any file is written.
# Usage: sweep_options_test.sh BIN_DIR (run from the source root).
set -euo pipefail
bin="$1/admitsim"
name=sweep_options_test
. "$(dirname "$0")/lib.sh"

s=scenarios/sweep_clock_skew.json
out="$tmp/never.json"
run_bad() {  # run_bad TEXT ARGS...: exit 2, one line holding TEXT, no output file
  local text="$1"; shift
  expect_rc 2 "$bin" sweep "$s" "$@" --out "$out"
  one_line "$text"
  [ ! -e "$out" ] || fail "a refused sweep wrote $out: $*"
}

run_bad '--param: expected a field the scenario has' --param /gate/nope --values 1
run_bad '--param: expected a JSON Pointer' --param gate/lease --values 1s
run_bad '--param: expected a field holding a duration, an integer or a number, got "/gate", which holds an object' --param /gate --values 1
run_bad '--values: expected a duration such as "2.5s"' --param /gate/lease --values 1s,x
run_bad '--values: expected values in increasing order' --param /gate/lease --values 2s,1s
run_bad '--from: expected an integer such as 4' --param /gate/limit --from 1.5 --to 3
run_bad '--to: expected a value above --from' --param /gate/lease --from 2s --to 1s
run_bad '--steps: expected an integer from 2 to 1000, got "1"' --param /gate/limit --from 1 --to 3 --steps 1
run_bad '--seeds: expected an integer from 1 to 1000000, got "0"' --param /gate/limit --from 1 --to 3 --seeds 0
run_bad '--jobs: expected an integer from 1 to 256, got "0"' --param /gate/limit --from 1 --to 3 --jobs 0
run_bad '--tolerance: expected a value above 0' --param /gate/limit --from 1 --to 3 --bisect --tolerance 0
run_bad 'sweep: --tolerance requires --bisect' --param /gate/limit --from 1 --to 3 --tolerance 1
run_bad 'sweep: expected a grid' --param /gate/limit
run_bad 'sweep: --from excludes --values' --param /gate/limit --values 1 --from 1 --to 2
# A value the loader refuses: the loader's message, its path, the value.
run_bad "$s: /gate/limit: expected an integer from 1 to 100000, got 0 (the value 0 of --param /gate/limit)" \
  --param /gate/limit --values 0,1
run_bad "/gate/protocol/client/renew_every/lease_fraction: expected a number from 0.001 to 0.999, got 1.5" \
  --param /gate/protocol/client/renew_every/lease_fraction --values 0.5,1.5
# An output folder that does not exist: refused before the sweep runs.
expect_rc 2 "$bin" sweep "$s" --param /gate/limit --values 1,2 --out "$tmp/no/such/x.json"
one_line "no such folder"
expect_rc 2 "$bin" sweep "$s" --param /gate/limit --values 1,2 --out "$tmp/a.json" --html "$tmp/a.json"
one_line "--html and --out: expected two files"
echo "$name: ok"
