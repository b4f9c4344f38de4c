#!/usr/bin/env bash
# admitsim merge: four shards, each a separate `admitsim explore` process run in parallel, merged
# into byte for byte the summary and files of the search on one machine (lease scenarios with
# expected violations, a FIFO one, a mutant with counterexamples: exit 1, more findings than a
# summary lists, a kind that is a counterexample in one shard only, inconclusive seeds); and what
# merge refuses.
# Method: the search as one writes DIR, which is moved aside; merge then writes the same DIR, and
# `diff -r` compares every file.
# Usage: merge_cli_test.sh BIN_DIR (run from the source root).
set -euo pipefail
bin="$1/admitsim"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "merge_cli_test: $*" >&2; exit 1; }
expect_rc() {  # expect_rc WANT CMD...
  local want="$1"; shift
  local rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "exit $rc, wanted $want: $*"; }
}
# expect_refused FILE_OR_SUBJECT WORDS CMD...: exit 2 and one line naming the subject and saying WORDS.
expect_refused() {
  local subject="$1" words="$2"; shift 2
  expect_rc 2 "$@"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err" >&2; fail "not one line: $*"; }
  grep -qF -- "admitsim: $subject: " "$tmp/err" || { cat "$tmp/err" >&2; fail "the line does not name $subject: $*"; }
  grep -qF -- "$words" "$tmp/err" || { cat "$tmp/err" >&2; fail "the line does not say \"$words\": $*"; }
}

# shards NAME FILE N ARGS...: runs shards 0/N .. N-1/N of FILE at once, each in its own process,
# into $tmp/NAME/shardI; each exits 0 or 1.
shards() {
  local name="$1" file="$2" n="$3"; shift 3
  local pids=() i
  for ((i = 0; i < n; i++)); do
    "$bin" explore "$file" --shard "$i/$n" --jobs 1 --out "$tmp/$name/shard$i" --quiet "$@" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    local rc=0
    wait "${pids[$i]}" || rc=$?
    [ "$rc" -le 1 ] || fail "shard $i/$n of $file exited $rc"
  done
}

# same NAME FILE WANT_RC ARGS...: the search as one in $tmp/NAME/one, four shards, their merge
# into the same folder: every file the same bytes, and merge exits as the search did.
same() {
  local name="$1" file="$2" want="$3"; shift 3
  local scenario_name
  expect_rc "$want" "$bin" explore "$file" --jobs 2 --out "$tmp/$name/one" --quiet "$@"
  mv "$tmp/$name/one" "$tmp/$name/single"
  shards "$name" "$file" 4 "$@"
  scenario_name="$(basename "$(ls "$tmp/$name/single/"*-explore.json)" -explore.json)"
  expect_rc "$want" "$bin" merge "$tmp/$name"/shard*/"$scenario_name-explore.json" --out "$tmp/$name/one"
  grep -q "^merge: 4 shards of $scenario_name" "$tmp/err" || fail "no summary line from merge of $name"
  diff -r "$tmp/$name/single" "$tmp/$name/one" >&2 || fail "$name: the merge differs from the search as one"
}
# shrunk NAME: the merged folder holds a minimal scenario (so the file copies were compared too).
shrunk() { [ -n "$(ls "$tmp/$1/one/"*-min.json 2>/dev/null)" ] || fail "$1: no shrink in the merged folder"; }

# A lease scenario whose seed variant breaks as expected (exit 0), two kinds shrunk.
same steps scenarios/explore_clock_steps.json 0 --seeds 40
shrunk steps
# Causes: every broken invariant of a finding, and every kind, names its causes; a kind's causes are
# summed over the shards (no one shard holds them all), each with the first seed's sentence.
python3 - "$tmp/steps/one/explore_clock_steps-explore.json" "$tmp/steps"/shard*/explore_clock_steps-explore.json <<'EOF2' ||
import json, sys
merged = json.load(open(sys.argv[1]))
shards = [json.load(open(f)) for f in sys.argv[2:]]
breaks = {}
for f in merged["findings"]:
    for r in f["runs"]:
        for b in r["broken"]:
            assert b["causes"], ("a broken invariant without causes", f["seed"], b)
            for c in b["causes"]:
                assert set(c) == {"kind", "count", "example"} and c["count"] >= 1 and c["example"], c
        if r["broken"]:
            breaks.setdefault((r["variant"], r["broken"][0]["invariant"]), []).append((f["seed"], r["broken"][0]))
summed = False
for k in merged["totals"]["by_kind"]:
    assert k["causes"], ("a kind without causes", k)
    for c in k["causes"]:
        assert 1 <= c["seeds"] <= k["seeds"] and c["first_seed"] >= k["first_seed"], c
        seed, b = min(x for x in breaks[(k["variant"], k["invariant"])] if any(d["kind"] == c["kind"] for d in x[1]["causes"]))
        assert seed == c["first_seed"], (c, seed)
        assert c["example"] == next(d["example"] for d in b["causes"] if d["kind"] == c["kind"]), c
        per_shard = [next((d["seeds"] for sk in s["totals"]["by_kind"] if (sk["variant"], sk["invariant"]) == (k["variant"], k["invariant"])
                           for d in sk["causes"] if d["kind"] == c["kind"]), 0) for s in shards]
        assert sum(per_shard) == c["seeds"], (c, per_shard)
        summed = summed or max(per_shard) < c["seeds"]
assert summed, "no cause spread over several shards: the case tests no merging"
EOF2
  fail "steps: the causes of the findings are missing or not merged"
grep -q '^    cause ' <("$bin" explore scenarios/explore_clock_steps.json --seeds 8 --no-shrink --out "$tmp/steps_err" 2>&1) ||
  fail "explore's stderr lists no cause under a kind of finding"
# Crashed renewers: two variants break, each kind's first seed in another shard.
same renewer scenarios/explore_crashed_renewer.json 0 --seeds 24 --shrink-max 2
shrunk renewer
# A FIFO scenario: a crash with a restart breaks the portal's cap, as it expects.
same fifo scenarios/fifo_crash_restart.json 0 --seeds 30
shrunk fifo
# Counterexamples (a broken gate): the search and the merge exit 1, with the same reasons.
same mutant tests/explore/mutants/admit_off_by_one.json 1 --seeds 30
shrunk mutant
grep -q '"code": 1' "$tmp/mutant/one/mutant_admit_off_by_one-explore.json" || fail "the mutant's merge says exit 0"
# --no-shrink, and a first seed that is not a multiple of the shard count.
same noshrink scenarios/explore_clock_steps.json 0 --seeds 37 --first-seed 5 --no-shrink
# More than the 1,000 findings a summary lists (the FIFO crash breaks the cap at every seed).
same many scenarios/fifo_crash_restart.json 0 --seeds 1010 --no-shrink
grep -q '"findings_omitted": 10,' "$tmp/many/one/fifo_crash_restart-explore.json" || fail "no findings omitted"
# A kind that is a counterexample in some shards only: with the seed variant allowed only
# portal_inflight_le_cap, seed 0 breaks just that (expected) and seed 9 more (a counterexample);
# over seeds 0..35 shard 0/4 holds no seed of the second sort, shard 1/4 does. The kind, first
# shown by seed 0 of shard 0, is a counterexample of the search, and so is its shrink's entry.
python3 - scenarios/explore_clock_steps.json "$tmp/mixed.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["name"] = "explore_clock_steps_mixed"
doc["expect"]["variants"]["seed"] = {"verdict": "violation", "violated": ["portal_inflight_le_cap"]}
open(sys.argv[2], "w").write(json.dumps(doc, indent=2) + "\n")
EOF
same mixed "$tmp/mixed.json" 1 --seeds 36
grep -q '"counterexample": false' "$tmp/mixed/shard0/explore_clock_steps_mixed-explore.json" ||
  fail "shard 0/4 of the mixed search has no kind that is not a counterexample: the case tests nothing"
# The same from seed 2 with --shrink-max 1: the search as one shrinks the kind first shown by seed 2,
# a counterexample of the search; shard 2/4 holds seed 2, where that kind is no counterexample and
# falls behind another, so it shrank the other. Merge refuses; shards that shrink 2 kinds give it.
shards mixed1 "$tmp/mixed.json" 4 --seeds 38 --first-seed 2 --shrink-max 1
expect_refused "$tmp/mixed1/shard2/explore_clock_steps_mixed-explore.json" "/shrunk: no shrink of seed 2" \
  "$bin" merge "$tmp/mixed1"/shard*/explore_clock_steps_mixed-explore.json --out "$tmp/x"
expect_rc 1 "$bin" explore "$tmp/mixed.json" --seeds 38 --first-seed 2 --shrink-max 1 --out "$tmp/mixed2/one" --quiet
mv "$tmp/mixed2/one" "$tmp/mixed2/single"
shards mixed2 "$tmp/mixed.json" 4 --seeds 38 --first-seed 2 --shrink-max 2
expect_rc 1 "$bin" merge "$tmp/mixed2"/shard*/explore_clock_steps_mixed-explore.json --shrink-max 1 \
  --out "$tmp/mixed2/one" --quiet
diff -r "$tmp/mixed2/single" "$tmp/mixed2/one" >&2 || fail "merge --shrink-max 1 of shards that shrank 2 differs"
# Inconclusive seeds (a horizon of 76s cuts 7 of the first 40; the first is seed 1, in shard 1/4): exit 1,
# the reason naming the least of the shards' first inconclusive seeds.
python3 - scenarios/explore_clock_steps.json "$tmp/cut.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["name"] = "explore_clock_steps_cut"
doc["checks"] = {"horizon": "76s"}
open(sys.argv[2], "w").write(json.dumps(doc, indent=2) + "\n")
EOF
same cut "$tmp/cut.json" 1 --seeds 40
grep -q 'could not finish.*the first is seed 1, horizon' "$tmp/cut/one/explore_clock_steps_cut-explore.json" ||
  fail "the merged reason does not name seed 1"

# Shards that shrank more kinds than the search as one: merge --shrink-max takes the first K.
expect_rc 0 "$bin" explore scenarios/explore_crashed_renewer.json --seeds 24 --shrink-max 1 --out "$tmp/k/one" --quiet
mv "$tmp/k/one" "$tmp/k/single"
shards k scenarios/explore_crashed_renewer.json 4 --seeds 24 --shrink-max 4
expect_rc 0 "$bin" merge "$tmp/k"/shard*/explore_crashed_renewer-explore.json --shrink-max 1 --out "$tmp/k/one" --quiet
diff -r "$tmp/k/single" "$tmp/k/one" >&2 || fail "merge --shrink-max 1 differs from explore --shrink-max 1"

# A search on one machine's summary has no "merge" key (its bytes are as before); a shard's has.
grep -q '"merge"' "$tmp/steps/single/explore_clock_steps-explore.json" && fail "a search as one carries \"merge\""
grep -q '"merge"' "$tmp/steps/shard0/explore_clock_steps-explore.json" || fail "a shard's summary lacks \"merge\""

# Refusals: exit 2, one line naming the file (or option) and what is wrong; nothing written.
s="$tmp/steps"
n=explore_clock_steps-explore.json
expect_refused merge "shard 3/4 is missing" "$bin" merge "$s"/shard{0,1,2}/$n --out "$tmp/x"
expect_refused "$s/shard1/$n" "shard 1/4 again" "$bin" merge "$s"/shard{0,1,1,2,3}/$n --out "$tmp/x"
expect_refused "$tmp/fifo/shard1/fifo_crash_restart-explore.json" "/scenario/sha256: another scenario" \
  "$bin" merge "$s/shard0/$n" "$tmp/fifo/shard1/fifo_crash_restart-explore.json" "$s"/shard{2,3}/$n --out "$tmp/x"
expect_refused "$tmp/noshrink/shard1/$n" "/seeds/first: another --first-seed" \
  "$bin" merge "$s/shard0/$n" "$tmp/noshrink/shard1/$n" "$s"/shard{2,3}/$n --out "$tmp/x"
expect_refused scenarios/lab_fifo.json "/format: expected \"admitsim-explore/1\"" "$bin" merge scenarios/lab_fifo.json
printf 'not json' >"$tmp/garbage.json"
expect_refused "$tmp/garbage.json" "/: expected valid JSON" "$bin" merge "$tmp/garbage.json"
expect_refused "$s/single/$n" "/merge: missing" "$bin" merge "$s/single/$n" --out "$tmp/x"
expect_refused "$tmp/k/shard2/explore_crashed_renewer-explore.json" "/merge/shrink_max: another --shrink-max" \
  "$bin" merge "$tmp/renewer"/shard{0,1}/explore_crashed_renewer-explore.json \
  "$tmp/k/shard2/explore_crashed_renewer-explore.json" "$tmp/renewer/shard3/explore_crashed_renewer-explore.json"
expect_refused --shrink-max "expected at most 2" \
  "$bin" merge "$tmp/renewer"/shard*/explore_crashed_renewer-explore.json --shrink-max 3 --out "$tmp/x"
# Shards of 3 beside shards of 4.
shards three scenarios/explore_clock_steps.json 3 --seeds 40
expect_refused "$tmp/three/shard1/$n" "a shard of 3, expected one of 4" \
  "$bin" merge "$s/shard0/$n" "$tmp/three/shard1/$n" "$s"/shard{2,3}/$n --out "$tmp/x"
# A time-bounded search: its seeds depend on each machine's clock.
"$bin" explore scenarios/explore_clock_steps.json --time 100ms --shard 0/2 --no-shrink --out "$tmp/t" --quiet || true
expect_refused "$tmp/t/$n" "/seeds/count: null: a --time search" "$bin" merge "$tmp/t/$n"
# An interrupted shard, and one that ran fewer seeds than its share (summaries edited as such a run leaves them).
sed 's/"last": \([0-9]*\)$/"last": \1,\n    "complete": false/' "$s/shard2/$n" >"$tmp/interrupted.json"
grep -q '"complete": false' "$tmp/interrupted.json" || fail "the edit made no interrupted summary"
expect_refused "$tmp/interrupted.json" "/seeds/complete: the search was interrupted" \
  "$bin" merge "$s"/shard{0,1,3}/$n "$tmp/interrupted.json" --out "$tmp/x"
sed 's/"ran": 10,/"ran": 9,/' "$s/shard2/$n" >"$tmp/short.json"
expect_refused "$tmp/short.json" "/seeds/ran: expected 10" "$bin" merge "$s"/shard{0,1,3}/$n "$tmp/short.json" --out "$tmp/x"
# A shard that did not shrink a kind the search as one shrinks (its "shrunk" emptied).
python3 - "$s/shard0/$n" "$tmp/unshrunk.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["shrunk"] = []
open(sys.argv[2], "w").write(json.dumps(doc, indent=2) + "\n")
EOF
expect_refused "$tmp/unshrunk.json" "/shrunk: no shrink of seed 0" \
  "$bin" merge "$tmp/unshrunk.json" "$s"/shard{1,2,3}/$n --out "$tmp/x"
[ ! -e "$tmp/x" ] || fail "a refused merge created its folder"
# The merged summary never replaces a shard's summary given to it.
expect_refused "$s/shard0/$n" "is a shard's summary given to merge" "$bin" merge "$s"/shard*/$n --out "$s/shard0"
echo "merge_cli_test: ok"
