#!/usr/bin/env bash
# Goal: --trace writes every trace entry of every run as JSON lines (docs/trace.md), passing runs too,
# the same bytes for the same seed, and refuses the paths every output refuses.
# Method: run, replay and explore --order with --trace on FIFO and lease scenarios; parse every line
# (python3's json, strict), check each run's begin/end and its count of entries, compare the lines with
# the report's bounded trace where the report holds the whole run, and give bad paths (exit 2).
# Usage: trace_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=trace_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed to parse the lines"
lab=scenarios/lab_fifo.json
lease=scenarios/crashed_holder.json

# check_trace FILE RUN...: every line is one JSON object; the runs are RUN... in order, each a begin line
# (format, scenario, seed), its entries (the keys of docs/trace.md, in order, each carrying the run's
# name) and an end line whose count is its number of entries. Prints the count of entry lines.
check_trace() {
  python3 - "$@" <<'EOF'
import json, sys
path, runs = sys.argv[1], sys.argv[2:]
keys = ["run", "at_ns", "source", "what", "active", "waiting", "ref"]
seen, current, entries, total = [], None, 0, 0
with open(path, "rb") as f:
    for n, raw in enumerate(f, 1):
        assert raw.endswith(b"\n"), f"line {n} has no newline"
        line = json.loads(raw.decode("utf-8"))  # strict: one object per line, valid UTF-8
        assert isinstance(line, dict), f"line {n} is not an object"
        if "begin" in line:
            assert current is None, f"line {n}: a run begins inside another"
            assert list(line) == ["run", "begin"], f"line {n}: {list(line)}"
            assert line["begin"]["format"] == "admitsim-trace/1"
            current, entries = line["run"], 0
            seen.append(current)
        elif "end" in line:
            assert line["run"] == current, f"line {n}: the end of {line['run']!r} inside {current!r}"
            assert line["end"] == {"entries": entries}, f"line {n}: {line['end']} but {entries} entries"
            current = None
        else:
            assert list(line) == keys, f"line {n}: keys {list(line)}"
            assert line["run"] == current, f"line {n}: run {line['run']!r} inside {current!r}"
            assert isinstance(line["at_ns"], int) and line["at_ns"] >= 0
            entries += 1
            total += 1
assert current is None, f"the run {current!r} has no end line"
assert seen == runs, f"runs {seen}, expected {runs}"
print(total)
EOF
}

# A passing FIFO run: one run named "", every line parses; the file has no report's wall time in it.
expect_rc 0 "$bin" run "$lab" --out "$tmp/lab.json" --trace "$tmp/lab.jsonl" --quiet
grep -q '"verdict": "pass"' "$tmp/lab.json" || fail "the lab run did not pass"
n="$(check_trace "$tmp/lab.jsonl" "")" || fail "the FIFO trace is not as documented"
[ "$n" -gt 20 ] || fail "the lab's trace has only $n entries"
head -1 "$tmp/lab.jsonl" | grep -qF '{"run":"","begin":{"format":"admitsim-trace/1","scenario":"lab_fifo","file":"scenarios/lab_fifo.json","seed":1}}' ||
  fail "the begin line is not as documented: $(head -1 "$tmp/lab.jsonl")"
if command -v jq >/dev/null; then
  jq -e . "$tmp/lab.jsonl" >/dev/null || fail "jq cannot read the trace"
fi

# The same seed gives the same bytes (to a file and to stdout); another seed other bytes.
expect_rc 0 "$bin" run "$lab" --out "$tmp/lab2.json" --trace - --quiet
cmp -s "$tmp/lab.jsonl" "$tmp/out" || fail "two runs of one seed wrote different traces"
expect_rc 0 "$bin" run scenarios/fifo_poisson.json --seed 1 --out "$tmp/p1.json" --trace "$tmp/p1.jsonl" --quiet
expect_rc 0 "$bin" run scenarios/fifo_poisson.json --seed 2 --out "$tmp/p2.json" --trace "$tmp/p2.jsonl" --quiet
check_trace "$tmp/p1.jsonl" "" >/dev/null || fail "fifo_poisson's trace is not as documented"
! cmp -s "$tmp/p1.jsonl" "$tmp/p2.jsonl" || fail "seeds 1 and 2 wrote the same trace"

# A lease run: one run per variant, in order, each named on every line; deterministic; seeds differ.
expect_rc 0 "$bin" run "$lease" --out "$tmp/l.json" --trace "$tmp/l.jsonl" --quiet
n="$(check_trace "$tmp/l.jsonl" seed server_time)" || fail "the lease trace is not as documented"
[ "$n" -gt 1000 ] || fail "crashed_holder's trace has only $n entries"
expect_rc 0 "$bin" run "$lease" --out "$tmp/l2.json" --trace "$tmp/l2.jsonl" --quiet
cmp -s "$tmp/l.jsonl" "$tmp/l2.jsonl" || fail "two lease runs of one seed wrote different traces"
expect_rc 0 "$bin" run "$lease" --seed 14 --out "$tmp/l14.json" --trace "$tmp/l14.jsonl" --quiet
! cmp -s "$tmp/l.jsonl" "$tmp/l14.jsonl" || fail "seeds 13 and 14 wrote the same lease trace"

# The count checked against the report: a leak found only at the end of the run, with a ring large enough,
# has the run's every entry in the report's trace; the trace file holds exactly those, in order.
cat >"$tmp/leak.json" <<'EOF'
{"name": "leak", "seed": 1,
 "gate": {"kind": "fifo", "max_active": 1, "max_waiting": 2, "wait_deadline": "1s", "mutation": "leak_handover_on_cancel"},
 "service": {"service_time": "100ms"},
 "workload": {"requests": [{"id": "a", "at": "0ms"}, {"id": "b", "at": "10ms", "cancel_at": "100ms"}]},
 "checks": {"trace": 100000}}
EOF
expect_rc 1 "$bin" run "$tmp/leak.json" --out "$tmp/leak-report.json" --trace "$tmp/leak.jsonl" --quiet
python3 - "$tmp/leak-report.json" "$tmp/leak.jsonl" <<'EOF' || fail "the trace file and the report's trace differ"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["verdict"] == "violation", report["verdict"]
trace = report["trace"]
assert trace["dropped_before"] == 0
lines = [json.loads(l) for l in open(sys.argv[2], "rb")]
entries = [{k: v for k, v in l.items() if k != "run"} for l in lines if "at_ns" in l]
assert lines[-1]["end"]["entries"] == len(entries)
assert entries == trace["entries"], f"{len(entries)} lines, {len(trace['entries'])} in the report"
assert len(entries) > 10
EOF

# replay --trace: the re-run's trace is the run's.
expect_rc 0 "$bin" replay "$tmp/l.json" --trace "$tmp/replayed.jsonl" --quiet
cmp -s "$tmp/l.jsonl" "$tmp/replayed.jsonl" || fail "replay wrote another trace than the run"

# explore --order: the order's run, its order in the begin line. The default order of a lease variant
# is the run's own, so its entries are that variant's lines of the run's trace.
expect_rc 0 "$bin" explore "$lease" --order '' --variant server_time --trace "$tmp/o.jsonl"
check_trace "$tmp/o.jsonl" server_time >/dev/null || fail "explore --order's trace is not as documented"
head -1 "$tmp/o.jsonl" | grep -qF '"seed":13,"order":""}}' || fail "no order in the begin line: $(head -1 "$tmp/o.jsonl")"
cmp -s <(grep -v '"begin"' "$tmp/o.jsonl") <(grep '"run":"server_time"' "$tmp/l.jsonl" | grep -v '"begin"') ||
  fail "the default order's trace is not the run's"
sed 's/"wait_deadline": "1s"}/"wait_deadline": "1s", "mutation": "leak_handover_on_cancel"}/' \
  scenarios/explore_handover_race.json >"$tmp/mutant.json"
expect_rc 1 "$bin" explore "$tmp/mutant.json" --exhaustive --max-delays 100 --out "$tmp/m" --quiet
order="$(grep -o '"order": "[0-9:,]*"' "$tmp/m/explore_handover_race-orders.json" | head -1 | sed 's/.*: "//; s/"$//')"
[ -n "$order" ] || fail "no violating order to replay"
expect_rc 1 "$bin" explore "$tmp/mutant.json" --order "$order" --trace "$tmp/race-bad.jsonl" --quiet
expect_rc 0 "$bin" explore "$tmp/mutant.json" --order '' --trace "$tmp/race-default.jsonl" --quiet
check_trace "$tmp/race-bad.jsonl" "" >/dev/null || fail "the violating order's trace is not as documented"
head -1 "$tmp/race-bad.jsonl" | grep -qF "\"order\":\"$order\"" || fail "the begin line does not name $order"
! cmp -s <(tail -n +2 "$tmp/race-bad.jsonl") <(tail -n +2 "$tmp/race-default.jsonl") || fail "two orders wrote one trace"

# A FIFO gets the lines in place and stays a FIFO.
mkfifo "$tmp/fifo"
timeout 10 cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
expect_rc 0 "$bin" run "$lab" --out "$tmp/lab3.json" --trace "$tmp/fifo" --quiet
wait "$reader" || fail "the reader of the FIFO got nothing"
[ -p "$tmp/fifo" ] || fail "the FIFO was replaced"
cmp -s "$tmp/lab.jsonl" "$tmp/from-fifo" || fail "the FIFO did not get the trace"

# Bad paths and uses, refused before anything runs (exit 2, one line, nothing written).
expect_rc 2 "$bin" run "$lab" --out "$tmp/r.json" --trace "$tmp"
one_line "$tmp: expected a file, got a directory"
expect_rc 2 "$bin" run "$lab" --out "$tmp/r.json" --trace "$tmp/missing/t.jsonl"
one_line "$tmp/missing/t.jsonl: no such folder: $tmp/missing"
expect_rc 2 "$bin" run "$lab" --out "$tmp/same" --trace "$tmp/same"
one_line "admitsim: --trace and --out: expected two files, got the same one: $tmp/same"
cp "$lab" "$tmp/scenario.json"
expect_rc 2 "$bin" run "$tmp/scenario.json" --out "$tmp/r.json" --trace "$tmp/scenario.json"
one_line "admitsim: --trace and the scenario file: expected two files, got the same one: $tmp/scenario.json"
cmp -s "$lab" "$tmp/scenario.json" || fail "the scenario file was written"
expect_rc 2 "$bin" run "$lab" --out "$tmp/r.json" --html "$tmp/h.html" --trace "$tmp/h.html"
one_line "admitsim: --trace and --html: expected two files"
expect_rc 2 "$bin" run "$lab" --out - --trace -
one_line "admitsim: --trace and --out: expected two files, got the same one: -"
expect_rc 2 "$bin" run "$lab" "$lease" --out-dir "$tmp/d" --trace "$tmp/t.jsonl"
one_line "admitsim: --trace: expected a single scenario (it names one trace file), got 2"
expect_rc 2 "$bin" replay "$tmp/l.json" --trace "$tmp/l.json"
one_line "admitsim: --trace and the report replayed: expected two files, got the same one: $tmp/l.json"
expect_rc 2 "$bin" explore "$lab" --seeds 2 --out "$tmp/e" --trace "$tmp/e.jsonl"
one_line "admitsim: --trace: expected --order as well"
expect_rc 2 "$bin" explore "$lab" --exhaustive --out "$tmp/e" --trace "$tmp/e.jsonl"
one_line "admitsim: --trace: expected --order as well"
expect_rc 2 "$bin" explore "$lab" --order '' --trace "$tmp"
one_line "$tmp: expected a file, got a directory"
[ ! -e "$tmp/r.json" ] && [ ! -e "$tmp/d" ] && [ ! -e "$tmp/e" ] && [ ! -e "$tmp/t.jsonl" ] && [ ! -e "$tmp/e.jsonl" ] ||
  fail "a refused command wrote something"

# A write that fails names the errno and leaves nothing half written: ENOSPC on /dev/full (before the report
# is written), EFBIG past a file size limit (the file there before is kept, no temporary file is left).
if [ -w /dev/full ]; then
  expect_rc 2 "$bin" run "$lab" --out "$tmp/full.json" --trace /dev/full
  one_line "/dev/full: cannot write the trace (No space left on device)"
  [ ! -e "$tmp/full.json" ] || fail "the report was written although the trace failed"
fi
echo old >"$tmp/kept.jsonl"
rc=0
(trap '' XFSZ; ulimit -f 2; exec "$bin" run "$lease" --out /dev/null --trace "$tmp/kept.jsonl" --quiet) 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] || { cat "$tmp/err" >&2; fail "a trace past the file size limit exited $rc"; }
one_line "$tmp/kept.jsonl: cannot write the trace (File too large)"
[ "$(cat "$tmp/kept.jsonl")" = old ] || fail "a failed trace changed the file already there"
[ -z "$(find "$tmp" -name '.kept.jsonl.*')" ] || fail "a failed trace left its temporary file"

# --help names the option on every verb that takes it.
for verb in run replay explore; do
  # Into a file first: grep -q stops reading at its match, and under pipefail the help's next write
  # (SIGPIPE) would fail the pipeline however the help reads.
  "$bin" "$verb" --help >"$tmp/help-$verb"
  grep -q -- '--trace' "$tmp/help-$verb" || fail "$verb --help says nothing of --trace"
done
echo "$name: ok"
