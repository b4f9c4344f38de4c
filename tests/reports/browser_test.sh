#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium loads the pages of violating scenarios
# (clock_skew; client_timeout_overshoot, a run that keeps going through many violation windows; the
# committed shrunk counterexample reports/examples/shrunk/) and of a passing one (lab_fifo) from
# disk, with the network off. The dumped DOM must show that the inline script ran (it sets
# data-script-ok), the verdict and, for the violating pages, the violation marker, the cause table
# and the zooms onto the worst moment and the first violation (the script counts them as the
# browser built them: data-zooms, data-cause-tables); the browser's console must show no uncaught
# error; a screenshot of each violating page must be a real PNG of some size. Usage:
# browser_test.sh ADMITSIM CHROMIUM (from the repository root).
set -euo pipefail
admitsim="$1"
chromium="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "browser_test: $*" >&2; exit 1; }

browser() {  # browser LOG ARGS...: one headless Chromium run with its own profile
  local log="$1"
  shift
  local profile
  profile="$(mktemp -d "$work/profile.XXXXXX")"
  HOME="$work" timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 "$@" 2>"$log"
}
no_script_errors() {  # no_script_errors LOG
  if grep -E "Uncaught|CONSOLE.*(Error|error)" "$1" >&2; then fail "script errors in the page (log: $1)"; fi
}

"$admitsim" run scenarios/clock_skew.json --out "$work/clock_skew.json" --html "$work/clock_skew.html" --quiet
"$admitsim" run scenarios/lab_fifo.json --out "$work/lab_fifo.json" --html "$work/lab_fifo.html" --quiet

browser "$work/dom.log" --dump-dom "file://$work/clock_skew.html" >"$work/dom.html" || fail "chromium failed (dump-dom)"
no_script_errors "$work/dom.log"
grep -q 'data-script-ok="1"' "$work/dom.html" || fail "the inline script did not run to its end"
grep -q 'id="verdict" data-verdict="violation"' "$work/dom.html" || fail "no violation verdict in the DOM"
grep -q '>VIOLATION<' "$work/dom.html" || fail "no VIOLATION banner in the DOM"
grep -q 'id="violation-marker"' "$work/dom.html" || fail "no violation marker in the DOM"
grep -Eq 'data-violation-markers="[1-9]' "$work/dom.html" || fail "the script found no violation marker"

violating_page() {  # violating_page NAME SCENARIO_FILE ZOOMS: its page has its cause table and its zooms in the DOM
  local name="$1" file="$2" zooms="$3"
  "$admitsim" run "$file" --out "$work/$name.json" --html "$work/$name.html" --quiet
  browser "$work/$name.log" --dump-dom "file://$work/$name.html" >"$work/$name.dom.html" || fail "chromium failed ($name)"
  no_script_errors "$work/$name.log"
  local dom="$work/$name.dom.html"
  grep -q 'data-script-ok="1"' "$dom" || fail "$name: the inline script did not run to its end"
  grep -q 'id="verdict" data-verdict="violation"' "$dom" || fail "$name: no violation verdict in the DOM"
  grep -q 'id="violation-marker"' "$dom" || fail "$name: no violation marker in the DOM"
  grep -Eq 'data-cause-tables="[1-9]' "$dom" || fail "$name: the script found no cause table"
  grep -q '<table class="cause-table"' "$dom" || fail "$name: no cause table in the DOM"
  grep -Eq '<td class="(no-cause|cause)"' "$dom" || fail "$name: the cause table has neither a cause nor 'no cause identified'"
  grep -q "data-zooms=\"$zooms\"" "$dom" || fail "$name: the script did not find $zooms zooms"
  grep -Eq '<div class="zoom" id="[^"]*-zoom-(worst|first-worst)" data-zoom="(worst|first-worst)"' "$dom" ||
    fail "$name: no zoom onto the worst moment in the DOM"
  grep -q '<g class="lane zoomed">' "$dom" || fail "$name: the zoom shows no lane"
  browser "$work/$name.shot.log" --window-size=1400,1500 --screenshot="$work/$name.png" "file://$work/$name.html" \
    >/dev/null || fail "chromium failed (screenshot of $name)"
  [ "$(head -c 8 "$work/$name.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$name: the screenshot is not a PNG"
  local size
  size="$(stat -c %s "$work/$name.png")"
  [ "$size" -gt 50000 ] || fail "$name: the screenshot is only $size bytes: a blank page?"
}
# Two variants, each a zoom onto its worst moment and one onto its first violation.
violating_page client_timeout_overshoot scenarios/client_timeout_overshoot.json 4
# One variant, whose first violation is also its worst moment: one zoom.
violating_page shrunk reports/examples/shrunk/explore_redis_faults-seed75-seed-min.json 1

browser "$work/lab.log" --dump-dom "file://$work/lab_fifo.html" >"$work/lab_dom.html" || fail "chromium failed (lab)"
no_script_errors "$work/lab.log"
grep -q 'data-script-ok="1"' "$work/lab_dom.html" || fail "the inline script did not run on the lab page"
grep -q 'id="verdict" data-verdict="pass"' "$work/lab_dom.html" || fail "no pass verdict on the lab page"
grep -q 'data-violation-markers="0"' "$work/lab_dom.html" || fail "a passing run shows a violation marker"
grep -q 'data-zooms="0"' "$work/lab_dom.html" || fail "a passing run shows a zoom"
grep -q 'data-cause-tables="0"' "$work/lab_dom.html" || fail "a passing run shows a cause table"

browser "$work/shot.log" --window-size=1400,2000 --screenshot="$work/shot.png" "file://$work/clock_skew.html" \
  >/dev/null || fail "chromium failed (screenshot)"
[ -f "$work/shot.png" ] || fail "no screenshot written"
[ "$(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "the screenshot is not a PNG"
size="$(stat -c %s "$work/shot.png")"
[ "$size" -gt 50000 ] || fail "the screenshot is only $size bytes: a blank page?"
echo "browser_test: ok (screenshot $size bytes)"
