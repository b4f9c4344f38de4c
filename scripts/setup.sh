#!/usr/bin/env bash
# Installs admitsim's build and test dependencies from Debian's packages.
#   scripts/setup.sh             everything: the build, the tests, the benchmarks, fuzzing, the browser test
#   scripts/setup.sh --run-only  what building and running the admitsim command needs, and nothing else
#                                (scripts/quickstart.sh)
# Idempotent: packages already present are not downloaded again.
set -euo pipefail

# What the admitsim command needs to build and run.
run_packages=(
  cmake g++ make
  libboost1.81-dev        # Asio 1.26; never libboost-dev, which conflicts with it
  nlohmann-json3-dev
  libcli11-dev
  liblua5.1-0-dev         # Lua 5.1 for the script engine (gate/redis/lua_engine)
  lua-cjson-dev           # cjson, which Redis's scripting environment loads
  lua-bitop-dev           # bit, likewise
)
packages=(
  "${run_packages[@]}"
  catch2
  librapidcheck-dev
  libbenchmark-dev        # Google Benchmark, for bench/
  libhiredis-dev          # client for the real-Redis agreement tests
  redis-server            # started on loopback by the integration tests' runner
  clang                   # clang++ (14 on Debian 12): second compiler, and the fuzz targets
  libclang-rt-14-dev      # libFuzzer and the sanitizer runtimes for clang 14
  lld                     # the clang trees' linker (ADMITSIM_LINKER in CMakeLists.txt)
  chromium                # headless browser for the HTML report's test (ctest label browser)
  libxml2-utils           # xmllint: the matrix test checks its JUnit XML
  python3                 # the process gates' tests: the Python adapter and the example gates (docs/process-gate.md)
)

case "${1:-}" in
  --run-only) packages=("${run_packages[@]}") ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--run-only]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
