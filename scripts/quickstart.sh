#!/usr/bin/env bash
# Sets up, builds, and runs the default scenario (the lab's FIFO gate run);
# prints where the report went.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root"
./build/admitsim run scenarios/lab_fifo.json "$@"
echo "report: $root/out/lab_fifo-seed1.json"
