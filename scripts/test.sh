#!/usr/bin/env bash
# Sets up, builds, and runs every test: the unit tests, the property tests
# with their long budget (pinned seed), and the tests against a real
# redis-server that this script starts on loopback.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root"
ctest --test-dir build --output-on-failure -j2 -LE "redis|property-long"
if ctest --test-dir build -N -L property-long | grep -q "Total Tests: [1-9]"; then
  ctest --test-dir build --output-on-failure -L property-long
fi
if ctest --test-dir build -N -L redis | grep -q "Total Tests: [1-9]"; then
  tests/integration/run_with_redis.sh ctest --test-dir build --output-on-failure -L redis
fi
