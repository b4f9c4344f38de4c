#!/usr/bin/env bash
# Goal: what admitsim prints or writes for a person to read or paste is safe: list escapes control
# characters, replay commands quote file names for a POSIX shell, and replay refuses a report whose
# /scenario/file is not a string with exit 2 and the JSON path.
# Method: a description with ESC and newline; a scenario file named `with space;$(id).json` run and
# explored, its replay commands run by sh with a stand-in admitsim that prints its arguments; reports whose
# file is a number, missing, or an object.
# Usage: text_safety_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=text_safety_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"

mkdir "$tmp/cat"
python3 - "$tmp/cat/ctl.json" <<'PY'
import json, sys
s = json.load(open("scenarios/lab_fifo.json"))
s["name"] = "ctl"
s["description"] = "red \u001b[31mtext\u001b[0m and a\nnewline"
json.dump(s, open(sys.argv[1], "w"))
PY
expect_rc 0 "$bin" list --dir "$tmp/cat"
! grep -q $'\x1b' "$tmp/out" || fail "list printed a raw ESC"
grep -qF 'red \x1B[31mtext\x1B[0m and a\x0Anewline' "$tmp/out" || { cat -v "$tmp/out" >&2; fail "list did not escape"; }
[ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "list printed more than one line for one scenario"

# Replay commands: the file name reaches admitsim as one argument, and nothing else runs.
weird="$tmp/with space;\$(touch pwned).json"
cp scenarios/lab_fifo.json "$weird"
expect_rc 0 "$bin" run "$weird" --out "$tmp/weird-report.json" --quiet
mkdir "$tmp/fake"
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done\n' >"$tmp/fake/admitsim"
chmod +x "$tmp/fake/admitsim"
pasted() {  # pasted CMD: the arguments admitsim would get if CMD were pasted into sh
  (cd "$tmp" && PATH="$tmp/fake:$PATH" sh -c "$1")
}
cmd="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay"])' "$tmp/weird-report.json")"
[ "$(pasted "$cmd" | sed -n 2p)" = "$weird" ] || fail "the report's replay command does not quote the file: $cmd"
[ ! -e "$tmp/pwned" ] || fail "pasting the replay command ran a command substitution"
expect_rc 0 "$bin" run scenarios/lab_fifo.json --out "$tmp/plain-report.json" --quiet
grep -q '"replay": "admitsim run scenarios/lab_fifo.json --seed 1"' "$tmp/plain-report.json" ||
  fail "a plain file name is quoted"

mutant="$tmp/mutant it's.json"
cp tests/explore/mutants/admit_off_by_one.json "$mutant"
expect_rc 1 "$bin" explore "$mutant" --seeds 2 --shrink-max 1 --out "$tmp/ex" --quiet
cmd="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["shrunk"][0]["replay"])' \
  "$tmp/ex/mutant_admit_off_by_one-explore.json")"
[ "$(pasted "$cmd" | sed -n 2p)" = "$mutant" ] || fail "explore's replay command does not quote the file: $cmd"

# /scenario/file must be a string.
for v in 5 missing '{}'; do
  python3 - "$tmp/plain-report.json" "$tmp/bad.json" "$v" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]), object_pairs_hook=dict)
if sys.argv[3] == "missing": del r["scenario"]["file"]
else: r["scenario"]["file"] = json.loads(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"), indent=2)
PY
  expect_rc 2 "$bin" replay "$tmp/bad.json"
  one_line "$tmp/bad.json: /scenario/file: expected a string"
done
echo "$name: ok"
