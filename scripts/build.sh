#!/usr/bin/env bash
# Configures and builds admitsim, after installing the dependencies.
#   scripts/build.sh [CMAKE_ARGS...]               Release into build/; extra arguments go
#                                                  to the CMake configure step
#   scripts/build.sh --preset NAME [CMAKE_ARGS...] a preset of CMakePresets.json: release,
#                                                  asan (build-asan/), clang-release
#                                                  (build-clang/, admitsim only), fuzz
#                                                  (build-fuzz/, the fuzz targets only)
#   scripts/build.sh --preset NAME --target T [--target T...] [CMAKE_ARGS...]
#                                                  those targets instead of the preset's
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/setup.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
if [ "${1:-}" = "--preset" ]; then
  preset="${2:?usage: scripts/build.sh --preset NAME [CMAKE_ARGS...]}"
  shift 2
  targets=()
  while [ "${1:-}" = "--target" ]; do
    targets+=(--target "${2:?usage: scripts/build.sh --preset NAME --target TARGET ...}")
    shift 2
  done
  cd "$root"
  cmake --preset "$preset" "$@" >/dev/null
  cmake --build --preset "$preset" -j"$jobs" "${targets[@]}"
else
  # Tests and benchmarks on, whatever an earlier scripts/quickstart.sh left in build/'s cache.
  cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DADMITSIM_BUILD_TESTS=ON -DADMITSIM_BUILD_BENCH=ON \
    "$@" >/dev/null
  cmake --build "$root/build" -j"$jobs"
fi
