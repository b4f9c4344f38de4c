#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium loads the page of a violating scenario
# (clock_skew) and of a passing one (lab_fifo) from disk, with the network off. The dumped DOM must
# show that the inline script ran (it sets data-script-ok), the verdict and, for clock_skew, the
# violation marker; the browser's console must show no uncaught error; a screenshot must be a real
# PNG of some size. Usage: browser_test.sh ADMITSIM CHROMIUM (from the repository root).
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

browser "$work/lab.log" --dump-dom "file://$work/lab_fifo.html" >"$work/lab_dom.html" || fail "chromium failed (lab)"
no_script_errors "$work/lab.log"
grep -q 'data-script-ok="1"' "$work/lab_dom.html" || fail "the inline script did not run on the lab page"
grep -q 'id="verdict" data-verdict="pass"' "$work/lab_dom.html" || fail "no pass verdict on the lab page"
grep -q 'data-violation-markers="0"' "$work/lab_dom.html" || fail "a passing run shows a violation marker"

browser "$work/shot.log" --window-size=1400,2000 --screenshot="$work/shot.png" "file://$work/clock_skew.html" \
  >/dev/null || fail "chromium failed (screenshot)"
[ -f "$work/shot.png" ] || fail "no screenshot written"
[ "$(head -c 8 "$work/shot.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "the screenshot is not a PNG"
size="$(stat -c %s "$work/shot.png")"
[ "$size" -gt 50000 ] || fail "the screenshot is only $size bytes: a blank page?"
echo "browser_test: ok (screenshot $size bytes)"
