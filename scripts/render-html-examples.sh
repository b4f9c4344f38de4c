#!/usr/bin/env bash
# Regenerates the committed HTML report examples under reports/examples/: the pages of
# clock_skew (a lease scenario whose seed variant breaks the portal's cap), lab_fifo (the lab's
# FIFO run), redis_restart (a fault window and a violation), client_timeout_overshoot (a run that
# keeps going through 23 violation windows) and a shrunk counterexample (the shrunk scenario that
# `admitsim explore scenarios/explore_redis_faults.json --first-seed 75 --seeds 1` writes, kept in
# reports/examples/shrunk/), each with its scenario's own seed, and a screenshot of the top of every
# page but the lab's taken by headless Chromium.
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

# The shrunk counterexample, as the search writes it today.
shrunk=explore_redis_faults-seed75-seed-min
# One seed: its seed variant's counterexample is the page's. The search as a whole is not as expected at one
# seed (process_grace's expected liveness failure shows at other seeds), so what it must give is that file.
rc=0
./build/admitsim explore scenarios/explore_redis_faults.json --first-seed 75 --seeds 1 --jobs 1 --out "$work/explore" \
  --quiet || rc=$?
if [ "$rc" -gt 1 ] || [ ! -f "$work/explore/$shrunk.json" ]; then
  echo "render-html-examples: the search of explore_redis_faults gave no $shrunk.json (exit $rc)" >&2
  exit 1
fi
mkdir -p reports/examples/shrunk
cp "$work/explore/$shrunk.json" "reports/examples/shrunk/$shrunk.json"

page() {  # page SCENARIO_FILE NAME: its page, reports/examples/NAME.html
  local rc=0
  ./build/admitsim run "$1" --out "$work/$2.json" --html "reports/examples/$2.html" --quiet || rc=$?
  if [ "$rc" -ne 0 ]; then echo "render-html-examples: $2 did not come out as expected (exit $rc)" >&2; exit 1; fi
}
for name in clock_skew lab_fifo redis_restart client_timeout_overshoot; do page "scenarios/$name.json" "$name"; done
page "reports/examples/shrunk/$shrunk.json" "$shrunk"

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
shot client_timeout_overshoot 1500
shot "$shrunk" 1300
ls -l reports/examples/*.html reports/examples/*.png reports/examples/shrunk/
