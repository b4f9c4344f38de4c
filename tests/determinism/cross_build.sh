#!/usr/bin/env bash
# Same scenario and seed, same bytes, whatever the build: runs the scenario
# catalogue with the admitsim binary of each build given, and requires
# byte-identical reports and exit codes; then every report must replay with
# every build, and every committed example under reports/examples/ must come
# out again with every build but for its `diagnostics` (see step 3).
#
#   tests/determinism/cross_build.sh [--keep DIR] [--no-replay] [--reuse] NAME=BUILD_DIR [NAME=BUILD_DIR...]
#
# With --keep DIR the reports stay in DIR/NAME/, with a stamp of what made them: the
# binary's and every scenario file's SHA-256 and the seeds (ctest keeps them in
# BUILD_DIR/determinism/). With --reuse, a build whose BUILD_DIR/determinism/this/
# holds reports with the stamp of its binary and of today's catalogue is not run
# again: its kept reports are compared (scripts/test.sh, after ctest has run the
# catalogue in each tree). Any other build, or a stale stamp, runs as usual.
#
# The first build is the reference. With one build the script still runs the
# catalogue and the replays (how ctest uses it, in each build tree, as
# determinism_catalogue_replay); --no-replay skips the replays (scripts/test.sh
# across builds, after ctest has replayed in each tree). Every
# scenario in scenarios/*.json but schema.json runs with two seeds: the
# scenario's own and 12345678901234567890 (above 2^63, to catch a seed
# squeezed through a signed type). Exit 0 when all agree; 1 with the
# differing file, the first differing lines and the commands to reproduce.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

keep=""
replay=1
reuse=0
dirs=()
names=()
bins=()
while (($#)); do
  case "$1" in
    --keep) keep="$2"; shift 2 ;;
    --no-replay) replay=0; shift ;;
    --reuse) reuse=1; shift ;;
    *=*)
      names+=("${1%%=*}")
      dir="${1#*=}"
      case "$dir" in /*) ;; *) dir="$root/$dir" ;; esac
      if [ ! -x "$dir/admitsim" ]; then
        echo "cross_build: $dir/admitsim: not built" >&2
        exit 2
      fi
      bins+=("$dir/admitsim")
      dirs+=("$dir")
      shift
      ;;
    *) echo "usage: tests/determinism/cross_build.sh [--keep DIR] [--no-replay] [--reuse] NAME=BUILD_DIR..." >&2; exit 2 ;;
  esac
done
if ((${#bins[@]} == 0)); then
  echo "usage: tests/determinism/cross_build.sh [--keep DIR] [--no-replay] [--reuse] NAME=BUILD_DIR..." >&2
  exit 2
fi

if [ -n "$keep" ]; then
  work="$keep"
  rm -rf "$work"
  mkdir -p "$work"
else
  work="$(mktemp -d "${TMPDIR:-/tmp}/admitsim-determinism.XXXXXX")"
fi

shopt -s nullglob
scenarios=()
for f in scenarios/*.json; do
  # schema.json is no scenario; bench_* are the million-request benchmarks
  # (minutes under the sanitizer build), run by hand (docs/performance.md).
  case "$(basename "$f")" in
    schema.json | bench_*) ;;
    *) scenarios+=("$f") ;;
  esac
done
if ((${#scenarios[@]} == 0)); then
  echo "cross_build: no scenarios in scenarios/*.json" >&2
  exit 1
fi
seeds=(own 12345678901234567890)

failures=0
fail() {
  echo "cross_build: FAIL: $*" >&2
  failures=$((failures + 1))
}

# What made a set of reports: the binary, the catalogue and the seeds, each by its SHA-256.
stamp_of() {
  sha256sum "$1" "${scenarios[@]}" | awk '{print $1}'
  echo "seeds ${seeds[*]}"
}

# 1. Run the catalogue with every build (or take a build's kept reports, with --reuse).
for i in "${!bins[@]}"; do
  name="${names[$i]}"
  bin="${bins[$i]}"
  mkdir -p "$work/$name"
  start=$SECONDS
  kept="${dirs[$i]}/determinism/this"
  if ((reuse)) && [ -f "$kept/stamp" ] && cmp -s "$kept/stamp" <(stamp_of "$bin"); then
    cp "$kept"/*.json "$kept"/*.rc "$work/$name/"
    echo "cross_build: $name: the reports ctest kept in $kept (same binary, same catalogue)" >&2
    continue
  fi
  for f in "${scenarios[@]}"; do
    s="$(basename "$f" .json)"
    for seed in "${seeds[@]}"; do
      out="$work/$name/$s-seed-$seed.json"
      args=(run "$f" --out "$out" --quiet)
      [ "$seed" = own ] || args+=(--seed "$seed")
      set +e
      "$bin" "${args[@]}" 2>"$out.stderr"
      rc=$?
      set -e
      echo "$rc" >"$out.rc"
      if ((rc > 1)); then
        fail "$name: admitsim ${args[*]} exited $rc: $(head -c 2000 "$out.stderr")"
      fi
    done
  done
  ((failures)) || stamp_of "$bin" >"$work/$name/stamp"  # only a complete set is reused
  echo "cross_build: $name ran ${#scenarios[@]} scenarios x ${#seeds[@]} seeds in $((SECONDS - start))s" >&2
done

# 2. Every build's reports and exit codes are the reference's, byte for byte.
ref="${names[0]}"
compared=0
for f in "${scenarios[@]}"; do
  s="$(basename "$f" .json)"
  for seed in "${seeds[@]}"; do
    for i in "${!bins[@]}"; do
      ((i > 0)) || continue
      name="${names[$i]}"
      a="$work/$ref/$s-seed-$seed.json"
      b="$work/$name/$s-seed-$seed.json"
      [ -f "$a" ] && [ -f "$b" ] || continue  # a failed run was reported above
      compared=$((compared + 1))
      if ! cmp -s "$a.rc" "$b.rc"; then
        fail "$f seed $seed: exit $(cat "$a.rc") with $ref but $(cat "$b.rc") with $name"
      fi
      if ! cmp -s "$a" "$b"; then
        fail "$f seed $seed: the $ref and $name reports differ; first differences:"
        diff "$a" "$b" | head -20 >&2 || true
        seed_arg=""
        [ "$seed" = own ] || seed_arg=" --seed $seed"
        echo "  reproduce: ${bins[0]} run $f$seed_arg --out a.json; ${bins[$i]} run $f$seed_arg --out b.json; diff a.json b.json" >&2
      fi
    done
  done
done

# 3. Replays: each reference report with every build, byte for byte (admitsim replay compares the
# whole report, diagnostics included). The committed examples are golden files instead, compared as
# tests/world/examples_test.cpp compares them: their scenario and seed run again with every build must
# give them but for each `diagnostics` object (what the kernel did, which a faster kernel changes
# without changing the run), so a kernel change does not rewrite every example.
reports=("$work/$ref"/*.json)
examples=(reports/examples/*.json)
replayed=0
matched=0
((replay)) || bins=()
for i in "${!bins[@]}"; do
  start=$SECONDS
  for r in "${reports[@]}"; do
    set +e
    "${bins[$i]}" replay "$r" --quiet 2>"$work/replay.stderr"
    rc=$?
    set -e
    replayed=$((replayed + 1))
    if ((rc != 0)); then
      fail "${names[$i]}: admitsim replay $r exited $rc: $(head -c 2000 "$work/replay.stderr")"
    fi
  done
  for e in "${examples[@]}"; do
    read -r file seed < <(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["scenario"]["file"], r["seed"])' "$e")
    again="$work/example-again.json"
    set +e
    "${bins[$i]}" run "$file" --seed "$seed" --out "$again" --quiet 2>"$work/example.stderr"
    rc=$?
    set -e
    if ((rc > 1)); then
      fail "${names[$i]}: admitsim run $file --seed $seed (for $e) exited $rc: $(head -c 2000 "$work/example.stderr")"
      continue
    fi
    if python3 - "$e" "$again" <<'PY'; then
import collections, json, sys
def without_diagnostics(path):
    r = json.load(open(path), object_pairs_hook=collections.OrderedDict)  # order counts when comparing
    r.pop("diagnostics", None)
    for v in r.get("variants", {}).values():
        v.pop("diagnostics", None)
    return r
sys.exit(0 if without_diagnostics(sys.argv[1]) == without_diagnostics(sys.argv[2]) else 1)
PY
      matched=$((matched + 1))
    else
      fail "${names[$i]}: $e differs from what admitsim run $file --seed $seed gives now, beyond diagnostics" \
        "(scripts/regen-examples.sh rewrites the examples after an intended change)"
    fi
  done
  echo "cross_build: ${names[$i]} replayed ${#reports[@]} reports and checked ${#examples[@]} examples" \
    "in $((SECONDS - start))s" >&2
done

if ((failures)); then
  echo "cross_build: $failures failures; the reports are kept in $work" >&2
  exit 1
fi
echo "cross_build: ${#names[@]} builds (${names[*]}), ${#scenarios[@]} scenarios x ${#seeds[@]} seeds:" \
  "$compared cross-build comparisons identical, $replayed replays identical, $matched examples matched" >&2
[ -n "$keep" ] || rm -rf "$work"
