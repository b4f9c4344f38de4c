#!/usr/bin/env bash
# Goal: every verb says what went wrong in one shape, "admitsim: SUBJECT: MESSAGE" on one line, where
# SUBJECT is the file, the option or (for what names neither) the verb, and bad input exits 2.
# Method: a table of refusals across run, check, replay, list and explore (a scenario's JSON path, an
# unreadable file, an output path, a number, two options together, an order, what CLI11 refuses, no
# verb at all, a file name holding a newline); each must exit 2 with one line that starts with the
# subject and the message expected, and every line must match the shape.
# Usage: error_shape_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=error_shape_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"
lab=scenarios/lab_fifo.json
race=scenarios/explore_handover_race.json

shaped() {  # shaped SUBJECT MESSAGE_START ARGS...: exit 2, one line "admitsim: SUBJECT: MESSAGE_START..."
  local subject="$1" start="$2"; shift 2
  expect_rc 2 "$bin" "$@"
  one_line "$start"
  local line want="admitsim: $subject: $start"
  line="$(cat "$tmp/err")"
  [[ "$line" == "$want"* ]] || fail "expected a line starting with '$want', got '$line': $*"
  [[ "$line" =~ ^admitsim:\ [^:\ ][^:]*:\ [^\ ] ]] || fail "not the shape 'admitsim: SUBJECT: MESSAGE': $line"
  [[ "$line" != *"admitsim: admitsim"* ]] || fail "the prefix is doubled: $line"
}

# A scenario's own fault: the file, then the JSON path and what was expected.
zero="$tmp/zero_cap.json"
python3 - "$zero" <<'PY'
import json, sys
s = json.load(open("scenarios/lab_fifo.json"))
s["gates"][0]["max_active"] = 0
json.dump(s, open(sys.argv[1], "w"))
PY
shaped "$zero" "/gates/0/max_active: expected an integer from 1 to 1000000, got 0" check "$zero"
shaped "$zero" "/gates/0/max_active: expected an integer" run "$zero" --out "$tmp/r.json"
shaped "$zero" "/gates/0/max_active: expected an integer" explore "$zero" --seeds 1 --out "$tmp/ex"
# A file that cannot be read, and a report that is not one.
shaped "$tmp/none.json" "cannot open the scenario file (No such file or directory)" check "$tmp/none.json"
printf 'not json' >"$tmp/text.json"
shaped "$tmp/text.json" "expected an admitsim report (JSON), got unparsable text" replay "$tmp/text.json"
expect_rc 0 "$bin" run "$lab" --out "$tmp/good.json" --quiet
sed 's|"file": "scenarios/lab_fifo.json"|"file": 5|' "$tmp/good.json" >"$tmp/bad-file.json"
shaped "$tmp/bad-file.json" "/scenario/file: expected a string (the scenario's file name), got a number" \
  replay "$tmp/bad-file.json"
shaped "$tmp/no-dir" "cannot list the directory" list --dir "$tmp/no-dir"
# Output paths.
shaped "$tmp/missing/r.json" "no such folder: $tmp/missing" run "$lab" --out "$tmp/missing/r.json"
shaped "$tmp/good.json/ex" "cannot create the folder" explore "$lab" --seeds 1 --out "$tmp/good.json/ex"
# Options: a number, two options that exclude each other, an order.
shaped --seed "expected an integer from 0 to 18446744073709551615, got \"-1\"" run "$lab" --seed -1
shaped --jobs "expected an integer from 1 to 256, got \"0\"" explore "$lab" --jobs 0 --out "$tmp/ex"
shaped --shard "expected I/N with 0 <= I < N" explore "$lab" --shard 2/2 --out "$tmp/ex"
shaped --time "expected a duration such as \"60s\", got \"0s\"" explore "$lab" --time 0s --out "$tmp/ex"
shaped "--out and --out-dir" "expected one of them, got both" run "$lab" --out "$tmp/o.json" --out-dir "$tmp/d"
shaped --out "expected a single scenario (it names one report), got 2" run "$lab" "$lab" --out "$tmp/o.json"
shaped "--html and --out" "expected two files, got the same one: $tmp/same" run "$lab" --out "$tmp/same" --html "$tmp/same"
shaped --order "expected POINT:CHOICE pairs" explore "$race" --order x
shaped "$race" "--order '5000:1': the order does not fit the run" explore "$race" --order 5000:1
# What the option parser refuses names the verb, and the line says where its usage is.
shaped explore "--seeds excludes --time (admitsim explore --help shows the usage)" \
  explore "$lab" --seeds 5 --time 1s
shaped run "The following argument was not expected: --nope (admitsim run --help shows the usage)" \
  run "$lab" --nope
shaped usage "A subcommand is required (admitsim --help shows the usage)"
# A newline in a file name stays inside the one line.
nl="$tmp/new"$'\n'"line.json"
shaped "$tmp/new\\x0Aline.json" "cannot open the scenario file" check "$nl"
[ -z "$(ls "$tmp/ex" "$tmp/d" 2>/dev/null)" ] || fail "a refused command wrote files"
echo "$name: ok"
