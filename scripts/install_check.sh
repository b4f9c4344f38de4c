#!/usr/bin/env bash
# install_check.sh BUILD_DIR: the install, the exported CMake package and the
# .deb of a built tree, checked end to end (docs/install.md).
#
#  1. cmake --install BUILD_DIR into a fresh temporary prefix; the files that
#     must be there are; every quoted #include of an installed header names an
#     installed header, and no gate/ header includes sim/ or reports/.
#  2. The installed CLI runs an installed scenario (one that reads protocol and
#     Lua files by relative path) from a directory outside the source tree; its
#     report is byte-identical to the in-tree CLI's and replays; every installed
#     catalogue scenario loads (admitsim list).
#  3. tests/install/consumer (find_package(admitsim), admitsim::gate alone and
#     admitsim::sim) configures, builds and runs against the prefix.
#  4. examples/own_gate/run.sh PREFIX: the own-gate example (a separate
#     project) builds against the prefix, its core passes, its broken copy is
#     caught (docs/own-gate.md).
#  5. cpack -G DEB gives admitsim_<version>_<arch>.deb; dpkg-deb -c lists the
#     CLI, the package config and the data; dpkg-deb -I shows its Depends and
#     Recommends; extracted with dpkg-deb -x, its CLI gives the same report and
#     the consumer and the own-gate example build and run against its /usr.
# Any failure prints one line "install_check: FAIL: ..." and exits 1 (2 for a
# bad argument); the temporaries are removed either way.
#
# cpack, like `make install`, first brings the whole tree up to date (CMake's
# preinstall target); under ctest the tree is already built, so that is a
# no-op. Builds here use 2 jobs.
set -euo pipefail

usage() {
  echo "usage: scripts/install_check.sh BUILD_DIR (a configured and built admitsim tree)" >&2
  exit 2
}
[ $# -eq 1 ] || usage
[ -f "$1/CMakeCache.txt" ] || { echo "install_check: BUILD_DIR: $1 is not a configured build tree (no CMakeCache.txt)" >&2; exit 2; }
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -x "$build/admitsim" ] || { echo "install_check: BUILD_DIR: $build/admitsim is missing: build the tree first" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/admitsim-install-check.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
log="$tmp/log"
fail() {
  echo "install_check: FAIL: $*" >&2
  if [ -s "$log" ]; then
    echo "--- last output:" >&2
    tail -n 30 "$log" >&2
  fi
  exit 1
}
step() { echo "install_check: $*"; }
export CMAKE_BUILD_PARALLEL_LEVEL=2

# The scenario run through every installed CLI: a lease gate whose protocol
# file and Lua files are named by relative paths (designs/restart_grace.json,
# ../../gate/redis/lua/release.lua), so it only loads if the data layout holds.
scenario=scenarios/redis_restart_grace.json
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || fail "no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt"

# The in-tree CLI's report, the reference for every installed copy.
(cd "$src" && "$build/admitsim" run -q "$scenario" --out "$tmp/report_tree.json") >"$log" 2>&1 \
  || fail "the in-tree CLI could not run $scenario"

# check_prefix PREFIX WHAT: the installed files, headers, CLI and data under PREFIX.
check_prefix() {
  local prefix=$1 what=$2
  local cfg
  : >"$log"
  cfg=$(find "$prefix" -path '*/cmake/admitsim/admitsimConfig.cmake' -print -quit)
  [ -n "$cfg" ] || fail "$what: no lib/cmake/admitsim/admitsimConfig.cmake under $prefix"
  local f
  for f in admitsimConfigVersion.cmake admitsimTargets.cmake admitsimLua51.cmake; do
    [ -f "$(dirname "$cfg")/$f" ] || fail "$what: $(dirname "$cfg")/$f is missing"
  done
  for f in bin/admitsim include/admitsim/gate/fifo/fifo_gate.hpp include/admitsim/gate/asio/lease_client.hpp \
           include/admitsim/gate/redis/lua_engine.hpp include/admitsim/sim/world/world.hpp \
           include/admitsim/sim/scenario/loader.hpp include/admitsim/reports/report.hpp \
           share/admitsim/scenarios/schema.json share/admitsim/gate/redis/protocols/seed.json \
           share/admitsim/gate/redis/lua/release.lua; do
    [ -e "$prefix/$f" ] || fail "$what: $prefix/$f is missing"
  done
  [ ! -e "$prefix/include/admitsim/sim/cli" ] || fail "$what: the CLI's own headers (sim/cli) were installed"
  local lib
  for lib in gate_fifo gate_redis lua_engine kernel scenario world reports explore; do
    find "$prefix" -name "libadmitsim_$lib.a" | grep -q . || fail "$what: libadmitsim_$lib.a is missing"
  done

  # Headers: each quoted include resolves inside the install; gate/ stays apart from the simulator.
  local inc=$prefix/include/admitsim hdr rel target
  while IFS= read -r hdr; do
    rel=${hdr#"$inc"/}
    while IFS= read -r target; do
      [ -f "$inc/$target" ] || fail "$what: $rel includes \"$target\", which is not installed"
      case "$rel:$target" in
        gate/*:sim/* | gate/*:reports/*)
          fail "$what: the gate header $rel includes the simulator header \"$target\"" ;;
      esac
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$hdr")
  done < <(find "$inc" -name '*.hpp' | sort)

  # The CLI, from a directory outside the source tree: the same report as the tree's, and it replays.
  (cd "$prefix/share/admitsim" && "$prefix/bin/admitsim" run -q "$scenario" --out "$tmp/report.json") >"$log" 2>&1 \
    || fail "$what: $prefix/bin/admitsim run $scenario (in $prefix/share/admitsim) failed"
  cmp "$tmp/report_tree.json" "$tmp/report.json" >"$log" 2>&1 \
    || fail "$what: the installed CLI's report of $scenario differs from the in-tree CLI's"
  (cd "$tmp" && "$prefix/bin/admitsim" replay -q "$tmp/report.json") >"$log" 2>&1 \
    || fail "$what: $prefix/bin/admitsim replay of its own report failed"
  (cd "$tmp" && "$prefix/bin/admitsim" list --dir "$prefix/share/admitsim/scenarios") >"$tmp/list" 2>"$log" \
    || fail "$what: admitsim list --dir $prefix/share/admitsim/scenarios failed"
  [ -s "$tmp/list" ] || fail "$what: admitsim list found no installed scenario"
  if grep -q ' INVALID ' "$tmp/list"; then
    grep ' INVALID ' "$tmp/list" >"$log"
    fail "$what: installed scenarios that do not load from the install"
  fi
  step "$what: files, headers and CLI ok ($(wc -l <"$tmp/list") scenarios load, report identical to the tree's)"
}

# consumer PREFIX WHAT: the consumer project built and run against PREFIX.
consumer() {
  local prefix=$1 what=$2 dir="$tmp/consumer-$2"
  cmake -S "$src/tests/install/consumer" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    >"$log" 2>&1 || fail "$what: the consumer project does not configure against $prefix"
  grep -q "admitsim_DIR:PATH=$prefix/" "$dir/CMakeCache.txt" \
    || fail "$what: the consumer found an admitsim package outside $prefix ($(grep admitsim_DIR "$dir/CMakeCache.txt"))"
  cmake --build "$dir" >"$log" 2>&1 || fail "$what: the consumer project does not build against $prefix"
  (cd "$tmp" && "$dir/gate_only") >"$log" 2>&1 || fail "$what: the consumer's gate_only (admitsim::gate) failed"
  (cd "$tmp" && "$dir/sim_user") >"$log" 2>&1 || fail "$what: the consumer's sim_user (admitsim::sim) failed"
  step "$what: consumer (admitsim::gate, admitsim::sim) builds and runs"
}

# 1-3: cmake --install.
prefix="$tmp/prefix"
cmake --install "$build" --prefix "$prefix" >"$log" 2>&1 || fail "cmake --install $build --prefix $prefix failed"
check_prefix "$prefix" install
consumer "$prefix" install

# 4: examples/own_gate (a separate project on find_package(admitsim)).
own_gate() {
  local prefix=$1 what=$2
  bash "$src/examples/own_gate/run.sh" "$prefix" >"$log" 2>&1 || fail "$what: examples/own_gate/run.sh $prefix failed"
  step "$what: $(tail -n 1 "$log")"
}
own_gate "$prefix" install

# 5: the .deb.
arch=$(dpkg --print-architecture 2>/dev/null) || fail "dpkg --print-architecture failed (is dpkg installed?)"
(cd "$build" && cpack -G DEB -B "$tmp/pkg") >"$log" 2>&1 || fail "cpack -G DEB in $build failed"
deb="$tmp/pkg/admitsim_${version}_${arch}.deb"
[ -f "$deb" ] || { ls "$tmp/pkg" >"$log" 2>&1 || true; fail "cpack did not write admitsim_${version}_${arch}.deb"; }
dpkg-deb -c "$deb" >"$tmp/contents" 2>"$log" || fail "dpkg-deb -c $deb failed"
for f in ./usr/bin/admitsim ./usr/lib/cmake/admitsim/admitsimConfig.cmake ./usr/lib/cmake/admitsim/admitsimTargets.cmake \
         ./usr/include/admitsim/gate/fifo/fifo_gate.hpp ./usr/share/admitsim/scenarios/$(basename "$scenario"); do
  grep -q " $f\$" "$tmp/contents" || { cp "$tmp/contents" "$log"; fail "the .deb does not contain $f"; }
done
dpkg-deb -I "$deb" >"$tmp/info" 2>"$log" || fail "dpkg-deb -I $deb failed"
grep -q "^ Package: admitsim$" "$tmp/info" || { cp "$tmp/info" "$log"; fail "the .deb's Package is not admitsim"; }
grep -q "^ Version: $version$" "$tmp/info" || { cp "$tmp/info" "$log"; fail "the .deb's Version is not $version"; }
grep -q "^ Depends: .*libc6" "$tmp/info" || { cp "$tmp/info" "$log"; fail "the .deb declares no Depends on libc6"; }
grep -q "^ Recommends: .*liblua5.1-0-dev" "$tmp/info" || { cp "$tmp/info" "$log"; fail "the .deb does not recommend the -dev packages"; }
step "deb: $(basename "$deb"), $(grep '^ Depends:' "$tmp/info" | sed 's/^ //')"

root="$tmp/root"
dpkg-deb -x "$deb" "$root" >"$log" 2>&1 || fail "dpkg-deb -x $deb failed"
check_prefix "$root/usr" deb
consumer "$root/usr" deb
own_gate "$root/usr" deb

step "ok"
