#!/usr/bin/env bash
# Regenerates reports/examples/: the report of every catalogue scenario with
# its own seed. tests/world/examples_test.cpp fails on any byte difference
# outside the reports' `diagnostics` (the kernel's own counts, which it leaves
# out), so a change in behaviour shows up in review as a change of these files.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -x build/admitsim ] || scripts/build.sh
mkdir -p reports/examples
rm -f reports/examples/*.json
for f in scenarios/*.json; do
  name="$(basename "$f" .json)"
  case "$name" in schema|bench_*) continue ;; esac
  rc=0
  ./build/admitsim run "$f" --out "reports/examples/$name.json" --quiet || rc=$?
  if [ "$rc" -eq 2 ]; then echo "regen-examples: $f is not a valid scenario" >&2; exit 2; fi
done
ls reports/examples
