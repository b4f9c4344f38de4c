#!/usr/bin/env bash
# Sets up, builds, and runs the default scenario (the lab's FIFO gate run);
# prints where the report went. It installs what building and running the
# admitsim command needs (scripts/setup.sh --run-only) and builds that target
# alone, without the tests or the benchmarks: scripts/test.sh installs and
# builds everything.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh" --run-only
jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DADMITSIM_BUILD_TESTS=OFF -DADMITSIM_BUILD_BENCH=OFF \
  >/dev/null
cmake --build "$root/build" -j"$jobs" --target admitsim
cd "$root"
./build/admitsim run scenarios/lab_fifo.json "$@"
echo "report: $root/out/lab_fifo-seed1.json"
