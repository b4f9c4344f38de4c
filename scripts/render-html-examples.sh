#!/usr/bin/env bash
# Regenerates the committed HTML report examples under reports/examples/: the pages of
# clock_skew (a lease scenario whose seed variant breaks the portal's cap), lab_fifo (the lab's
# FIFO run) and redis_restart (a fault window and a violation), each with its scenario's own seed,
# and a screenshot of clock_skew and of redis_restart taken by headless Chromium.
# The JSON examples are left alone (scripts/regen-examples.sh owns them). Run from anywhere:
#   scripts/render-html-examples.sh
# See docs/html-report.md.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -x build/admitsim ] || scripts/build.sh
chromium="${CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] || { echo "render-html-examples: $chromium not found (scripts/setup.sh installs it)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for name in clock_skew lab_fifo redis_restart; do
  rc=0
  ./build/admitsim run "scenarios/$name.json" --out "$work/$name.json" --html "reports/examples/$name.html" \
    --quiet || rc=$?
  if [ "$rc" -ne 0 ]; then echo "render-html-examples: $name did not come out as expected (exit $rc)" >&2; exit 1; fi
done

shot() {  # shot NAME HEIGHT: the top of the page, 1400 pixels wide
  local profile
  profile="$(mktemp -d "$work/profile.XXXXXX")"
  HOME="$work" timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars --user-data-dir="$profile" \
    --window-size="1400,$2" --screenshot="reports/examples/$1.png" "file://$root/reports/examples/$1.html" \
    >/dev/null 2>"$work/$1.log" || { cat "$work/$1.log" >&2; exit 1; }
}
shot clock_skew 1900
shot redis_restart 1500
ls -l reports/examples/*.html reports/examples/*.png
