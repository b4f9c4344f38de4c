#!/usr/bin/env bash
# admitsim sweep at the command line: a small sweep and its files, the same bytes for any --jobs, the
# boundary the analysis of docs/sweep.md predicts for a caller-clock lease protocol (found within the
# tolerance), none for the server-clock design, and a non-monotone grid refused a boundary.
# Usage: sweep_cli_test.sh BIN_DIR (run from the source root).
set -euo pipefail
bin="$1/admitsim"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "sweep_cli_test: $*" >&2; exit 1; }
command -v python3 >/dev/null || fail "python3 is needed to read the sweep's JSON"
expect_rc() {  # expect_rc WANT CMD...
  local want="$1"; shift
  local rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "exit $rc, wanted $want: $*"; }
}
# field FILE PYTHON-EXPRESSION-OVER-d: prints the expression's value.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

skew=scenarios/sweep_clock_skew.json
server=scenarios/sweep_clock_skew_server.json
param=/fleet/clocks/0/offset

# A small sweep: two values, its JSON and its page.
expect_rc 0 "$bin" sweep "$skew" --param "$param" --values 2s,4s --seeds 2 --jobs 2 --out "$tmp/small.json" --html "$tmp/small.html"
[ "$(field "$tmp/small.json" "d['format']")" = "admitsim-sweep/1" ] || fail "no format"
[ "$(field "$tmp/small.json" "[v['class'] for v in d['grid']]")" = "['safe', 'unsafe']" ] || fail "2s should be safe and 4s unsafe"
[ "$(field "$tmp/small.json" "d['grid'][1]['violation_rate']")" = "1.0" ] || fail "4s should violate in every seed"
[ "$(field "$tmp/small.json" "d['boundary']['kind']")" = "found" ] || fail "a boundary between 2s and 4s"
grep -q '<svg class="sweep-plot"' "$tmp/small.html" || fail "no plot in the page"
grep -q 'class="boundary"' "$tmp/small.html" || fail "the page does not mark the boundary"
python3 -c "import sys,xml.dom.minidom as m; t=open(sys.argv[1]).read(); s=t.index('<svg'); e=t.index('</svg>')+6; m.parseString(t[s:e])" "$tmp/small.html" ||
  fail "the plot is not well-formed SVG"

# The same bytes whatever --jobs (a bisecting sweep, JSON and page).
for j in 1 3; do
  expect_rc 0 "$bin" sweep "$skew" --param "$param" --from 2.5s --to 3.5s --steps 3 --seeds 4 --bisect --tolerance 20ms \
    --jobs "$j" --out "$tmp/b$j.json" --html "$tmp/b$j.html" --quiet
done
cmp -s "$tmp/b1.json" "$tmp/b3.json" || fail "--jobs 1 and --jobs 3 wrote different JSON"
cmp -s "$tmp/b1.html" "$tmp/b3.html" || fail "--jobs 1 and --jobs 3 wrote different pages"

# The boundary the analysis predicts (docs/sweep.md): a holder renewing every r x lease is reaped by a
# clock ahead by s once s > (1 - r) x lease - 2 x latency (its renewal's round trip), less up to 1ms
# of the scripts' millisecond clock; with lease 15s, r = 0.8 and a latency of 0.5ms each way:
# violations are possible from just above 2.998s, and the sweep must bracket 2.999s within 20ms.
python3 - "$tmp/b1.json" <<'EOF2' || fail "the sweep's boundary disagrees with the analysis"
import json, sys
d = json.load(open(sys.argv[1]))
b = d["boundary"]
lease_ns, r, latency_ns, tol_ns = 15_000_000_000, 0.8, 500_000, 20_000_000
predicted = round((1 - r) * lease_ns) - 2 * latency_ns
assert b["kind"] == "found", b
assert b["direction"] == "unsafe_above", b
assert b["within_tolerance"], b
safe, unsafe = b["safe_x"], b["unsafe_x"]
# No violation at a skew the analysis calls safe (the exact bound, with the millisecond clock's 1ms).
assert unsafe > predicted - 1_000_000, (unsafe, predicted)
assert abs(safe - predicted) <= tol_ns and abs(unsafe - predicted) <= tol_ns, (safe, unsafe, predicted)
for v in d["grid"] + d["bisect"]["steps"]:
    if v["class"] == "unsafe":
        assert v["x"] > predicted - 1_000_000, v
print("boundary: safe", b["safe"], "unsafe", b["unsafe"], "predicted", predicted / 1e9, "s")
EOF2

# The mirror image (docs/sweep.md): a clock behind by s has its own permit reaped by the others
# from the same bound, so the sweep finds the boundary at -2.999s, unsafe below it.
expect_rc 0 "$bin" sweep "$skew" --param "$param" --values=-3.5s,-2.5s --seeds 2 --bisect --tolerance 50ms --jobs 2 \
  --out "$tmp/behind.json" --quiet
python3 - "$tmp/behind.json" <<'EOF2' || fail "the boundary of a clock behind disagrees with the analysis"
import json, sys
b = json.load(open(sys.argv[1]))["boundary"]
predicted, tol = -(3_000_000_000 - 1_000_000), 50_000_000
assert b["kind"] == "found" and b["direction"] == "unsafe_below" and b["within_tolerance"], b
assert b["unsafe_x"] < predicted + 1_000_000, b
assert abs(b["safe_x"] - predicted) <= tol and abs(b["unsafe_x"] - predicted) <= tol, b
EOF2

# The server-clock design: the skewed clock is never read by a script: no boundary in range.
expect_rc 0 "$bin" sweep "$server" --param "$param" --from 0s --to 20s --steps 5 --seeds 2 --bisect --jobs 2 --out "$tmp/server.json" --quiet
[ "$(field "$tmp/server.json" "d['boundary']['kind']")" = "none_all_safe" ] || fail "the server-clock design should show no boundary"
grep -q "no boundary in range" "$tmp/err" || fail "stderr does not say: no boundary in range"
[ "$(field "$tmp/server.json" "len(d['bisect']['steps'])")" = "0" ] || fail "bisected without a boundary"

# Not monotone: a clock behind by 4s has its own lease reaped by the others, one ahead by 4s reaps
# theirs; only the middle holds. No boundary is claimed and nothing is bisected.
expect_rc 0 "$bin" sweep "$skew" --param "$param" --values=-4s,0s,4s --seeds 2 --bisect --jobs 2 --out "$tmp/nm.json" --quiet
[ "$(field "$tmp/nm.json" "d['boundary']['kind']")" = "not_monotone" ] || fail "a safe middle between two unsafe ends is not monotone"
[ "$(field "$tmp/nm.json" "len(d['bisect']['steps'])")" = "0" ] || fail "bisected a non-monotone grid"
[ "$(field "$tmp/nm.json" "d['boundary']['safe']")" = "None" ] || fail "a non-monotone grid claimed a safe value"
grep -q "not monotone" "$tmp/err" || fail "stderr does not say: not monotone"

echo "sweep_cli_test: ok"
