#!/usr/bin/env bash
# Seeds a fuzz target's corpus directory from the repository's scenarios, at
# run time (nothing duplicated is committed):
#   fuzz/seed_corpus.sh TARGET DIR
# fuzz_scenario_loader: scenarios/*.json (not schema.json: at 50 KB it would
#   raise libFuzzer's length limit and slow every execution),
#   tests/scenario/malformed/*.json, and the saved regressions.
# fuzz_short_run: the same scenarios, each behind two 8-byte seeds (the
#   target reads the first 8 bytes as a little-endian seed), and its saved
#   regressions.
# fuzz_protocol_run: the built-in protocol files (gate/redis/protocols/*.json,
#   not schema.json) and those of scenarios/protocols/*/ and
#   scenarios/designs/, each with its scripts put inline by
#   fuzz_inline_protocol (ADMITSIM_INLINE_PROTOCOL, else the first of
#   build-fuzz/fuzz/ and build/fuzz/ that has it), and its saved regressions.
# Files already in DIR (inputs a previous run found) are kept.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?usage: fuzz/seed_corpus.sh TARGET DIR}"
dir="${2:?usage: fuzz/seed_corpus.sh TARGET DIR}"
mkdir -p "$dir"
shopt -s nullglob

sources=()
for f in "$root"/scenarios/*.json "$root"/tests/scenario/malformed/*.json; do
  [ "$f" = "$root/scenarios/schema.json" ] || sources+=("$f")
done
n=0
case "$target" in
  fuzz_scenario_loader)
    for f in "${sources[@]}"; do
      cp "$f" "$dir/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
      n=$((n + 1))
    done
    ;;
  fuzz_short_run)
    for f in "${sources[@]}"; do
      base="$(basename "$(dirname "$f")")-$(basename "$f" .json)"
      # Seed 1 (most scenarios' own) and 2^64 - 1 (every bit set).
      { printf '\001\000\000\000\000\000\000\000'; cat "$f"; } >"$dir/seed-$base-1"
      { printf '\377\377\377\377\377\377\377\377'; cat "$f"; } >"$dir/seed-$base-max"
      n=$((n + 2))
    done
    ;;
  fuzz_protocol_run)
    tool="${ADMITSIM_INLINE_PROTOCOL:-}"
    for t in "$root/build-fuzz/fuzz/fuzz_inline_protocol" "$root/build/fuzz/fuzz_inline_protocol"; do
      [ -n "$tool" ] || { [ -x "$t" ] && tool="$t"; }
    done
    if [ -z "$tool" ]; then
      echo "seed_corpus.sh: fuzz_inline_protocol is not built (cmake --build --preset fuzz)" >&2
      exit 2
    fi
    for f in "$root"/gate/redis/protocols/*.json "$root"/scenarios/protocols/*/protocol.json \
             "$root"/scenarios/designs/*/*.json "$root"/scenarios/designs/*.json; do
      [ "$f" = "$root/gate/redis/protocols/schema.json" ] && continue
      # scenarios/designs/ holds scenarios beside protocols: only what has a "format" of a protocol file.
      grep -q '"admitsim-protocol/1"' "$f" || continue
      "$tool" "$f" >"$dir/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
      n=$((n + 1))
    done
    ;;
  *)
    echo "seed_corpus.sh: unknown target $target (fuzz_scenario_loader, fuzz_short_run or fuzz_protocol_run)" >&2
    exit 2
    ;;
esac
for f in "$root/fuzz/regressions/$target"/*; do
  cp "$f" "$dir/regression-$(basename "$f")"
  n=$((n + 1))
done
echo "seed_corpus: $n seeds for $target in $dir" >&2
