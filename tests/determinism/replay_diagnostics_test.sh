#!/usr/bin/env bash
# `admitsim replay` compares a report's whole bytes, its `diagnostics` too, although the catalogue's
# golden tests leave diagnostics out: a report whose kernel figures were edited is refused.
#
#   tests/determinism/replay_diagnostics_test.sh BUILD_DIR
#
# Method: a FIFO report (diagnostics at the top) and a lease report (per variant) replay as written
# (exit 0); each with diagnostics.events or diagnostics.sequence_numbers moved by one does not (exit 1,
# "DIFFERS").
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:?usage: tests/determinism/replay_diagnostics_test.sh BUILD_DIR}/admitsim"
name=replay_diagnostics_test
cd "$root"
. tests/cli/lib.sh

edit() {  # edit IN OUT FIELD: OUT is IN with the first diagnostics object's FIELD one higher
  case "$3" in
    events) perl -0pe 's/("diagnostics": \{\n\s*"events": )(\d+)/$1.($2+1)/e' "$1" >"$2" ;;
    sequence_numbers) perl -0pe 's/("diagnostics": \{\n\s*"events": \d+,\n\s*"sequence_numbers": )(\d+)/$1.($2+1)/e' "$1" >"$2" ;;
  esac
  # Exactly one line changed, and it is the field asked for (diff exits 1 on a difference).
  local changed
  changed="$(diff "$1" "$2" | grep '^>' || true)"
  [ "$(printf '%s\n' "$changed" | wc -l)" -eq 1 ] || fail "editing $3 in $1 did not change exactly one line"
  [[ "$changed" =~ ^\>\ +\"$3\":\ [0-9]+,?$ ]] || fail "editing $3 in $1 changed another line: $changed"
}

for s in lab_fifo clock_skew; do
  rc=0
  "$bin" run "scenarios/$s.json" --out "$tmp/$s.json" --quiet || rc=$?
  [ "$rc" -le 1 ] || fail "admitsim run scenarios/$s.json exited $rc"
  grep -q '"diagnostics": {' "$tmp/$s.json" || fail "$s: no diagnostics in the report"
  expect_rc 0 "$bin" replay "$tmp/$s.json"
  grep -q 'identical' "$tmp/err" || fail "$s: replay of the report as written: $(cat "$tmp/err")"
  for field in events sequence_numbers; do
    edit "$tmp/$s.json" "$tmp/$s-$field.json" "$field"
    expect_rc 1 "$bin" replay "$tmp/$s-$field.json"
    grep -q 'DIFFERS from the recorded report' "$tmp/err" || fail "$s: replay with $field edited: $(cat "$tmp/err")"
  done
done
echo "$name: 2 reports replay as written and are refused with either diagnostics figure edited" >&2
