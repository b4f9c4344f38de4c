#!/usr/bin/env bash
# admitsim run --html: a single scenario's page goes to PATH; several go into PATH as a directory,
# named like their JSON reports; the page is written whole (no .partial left) and is the same
# bytes when run again. Usage: cli_html_test.sh ADMITSIM (from the repository root).
set -euo pipefail
admitsim="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "cli_html_test: $*" >&2; exit 1; }

"$admitsim" run scenarios/lab_fifo.json --out "$work/lab.json" --html "$work/lab.html" --quiet
[ -s "$work/lab.html" ] || fail "--html PATH wrote nothing"
[ ! -e "$work/lab.html.partial" ] || fail "a .partial file was left behind"
grep -q 'data-verdict="pass"' "$work/lab.html" || fail "lab.html has no pass verdict"

"$admitsim" run scenarios/lab_fifo.json --out "$work/lab2.json" --html "$work/lab2.html" --quiet
cmp -s "$work/lab.html" "$work/lab2.html" || fail "two runs of lab_fifo gave different pages"

mkdir "$work/pages"
rc=0
"$admitsim" run scenarios/lab_fifo.json scenarios/clock_skew.json --out-dir "$work/pages" --html "$work/pages" \
  --quiet || rc=$?
[ "$rc" -eq 0 ] || fail "two catalogue scenarios did not come out as expected (exit $rc)"
for f in lab_fifo-seed1 clock_skew-seed11; do
  [ -s "$work/pages/$f.json" ] || fail "missing $f.json"
  [ -s "$work/pages/$f.html" ] || fail "missing $f.html beside $f.json"
done
grep -q 'data-verdict="violation"' "$work/pages/clock_skew-seed11.html" || fail "clock_skew page has no violation"
echo "cli_html_test: ok"
