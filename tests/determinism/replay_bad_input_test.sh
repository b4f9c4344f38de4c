#!/usr/bin/env bash
# `admitsim replay` on files that are not reports: each must end in exit 2
# with a one-line message, never a crash.
#
#   tests/determinism/replay_bad_input_test.sh BUILD_DIR
#
# Method: write each bad file to a temporary directory and replay it. The
# deeply nested report is the regression for a stack overflow: replay copied
# and dumped a report of any depth recursively, so a file with a few hundred
# thousand nested arrays as its embedded scenario crashed the CLI.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${1:?usage: tests/determinism/replay_bad_input_test.sh BUILD_DIR}/admitsim"
cd "$root"
work="$(mktemp -d "${TMPDIR:-/tmp}/admitsim-replay-bad.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# A real report to start from.
"$bin" run scenarios/lab_fifo.json --out "$work/good.json" --quiet || true
[ -s "$work/good.json" ] || { echo "replay_bad_input: no report from scenarios/lab_fifo.json" >&2; exit 1; }

# Deep: the embedded scenario replaced by 300,000 nested arrays.
good="$(cat "$work/good.json")"
open="$(head -c 300000 /dev/zero | tr '\0' '[')"
close="$(head -c 300000 /dev/zero | tr '\0' ']')"
[[ "$good" == *'"source": {'* ]] || { echo "replay_bad_input: no /scenario/source in the report" >&2; exit 1; }
printf '%s"source": %s%s, "was": {%s\n' "${good%%\"source\": \{*}" "$open" "$close" "${good#*\"source\": \{}" \
  >"$work/deep.json"
printf 'not json' >"$work/text.json"
printf '{"format": "something-else"}' >"$work/format.json"
printf '{"format": "admitsim-report/1"}' >"$work/fields.json"
printf '' >"$work/empty.json"

failures=0
for f in deep text format fields empty; do
  set +e
  "$bin" replay "$work/$f.json" --quiet >"$work/$f.out" 2>"$work/$f.err"
  rc=$?
  set -e
  lines="$(wc -l <"$work/$f.err")"
  if ((rc != 2)) || ((lines != 1)); then
    echo "replay_bad_input: $f.json: expected exit 2 and one line, got exit $rc and:" >&2
    head -c 1500 "$work/$f.err" >&2
    failures=$((failures + 1))
  fi
done
((failures == 0)) && echo "replay_bad_input: 5 bad files, each exit 2 with one line" >&2
((failures == 0))
