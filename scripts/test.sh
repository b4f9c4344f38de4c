#!/usr/bin/env bash
# Sets up, builds, and runs every test; what CI (.ci/run) runs. In order:
#  0. the Debian packages (scripts/setup.sh: apt-get, only what is missing);
#  1. Release (build/): the unit tests, the property tests with their long
#     budget (pinned seed), and the tests against a real redis-server that
#     tests/integration/run_with_redis.sh starts on loopback, two at a time;
#  2. the sanitizer build (preset asan: clang++ Debug, ASan + UBSan, build-asan/):
#     the same suite but the long property budgets (and a quarter of the agreement
#     properties' cases), halting on the first report;
#  3. the libFuzzer build of stage 5, built in the background at nice 19 from
#     the start of stage 1's tests; stage 3 waits for what is left of it;
#  4. determinism across builds: the catalogue's reports must be the same
#     bytes from g++ -O3 (Release) and clang++ -O0/-O1 with the sanitizers (the
#     asan tree) (tests/determinism/cross_build.sh; ctest has already run the
#     catalogue, replayed every report and checked every example in both trees,
#     and their kept reports are compared). The clang++ Release tree (preset
#     clang-release, no unity build) is not built here (docs/ci.md);
#  5. fuzzing (preset fuzz): each libFuzzer target for a fixed time, all at
#     once (docs/fuzzing.md).
# Stages 2, 3 and 5 need clang++ (scripts/setup.sh installs it). Environment:
#   ADMITSIM_FUZZ_SECONDS  time per fuzz target (default 60; 0 skips stage 5)
#   ADMITSIM_FRESH_SEED    the RapidCheck seed of the fresh-seed property run
#                          (default: drawn from /dev/urandom and printed)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
fuzz_seconds="${ADMITSIM_FUZZ_SECONDS:-60}"
fuzz_targets=(fuzz_scenario_loader fuzz_short_run fuzz_protocol_run)  # built in stage 3, run in stage 5
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
t0=$SECONDS
times_file="$(mktemp "${TMPDIR:-/tmp}/admitsim-test-times.XXXXXX")"
fuzz_build=""
trap 'rm -f "$times_file"; [ -z "$fuzz_build" ] || kill -- "-$fuzz_build" 2>/dev/null || true' EXIT
stage() {  # with the CPU time of every child so far (user, system), to keep CI time in view
  times >"$times_file"  # in this shell: a command substitution would count a subshell's children
  echo "=== test.sh [$((SECONDS - t0))s wall; cpu $(tail -1 "$times_file")] $*" >&2
}

# ctest_all BUILD_DIR [CTEST_ARGS...]: the tests of a build tree, two at a
# time. With tests labelled `redis`, all of them run inside
# tests/integration/run_with_redis.sh, which starts a private redis-server
# on loopback, so that the slow agreement test overlaps the others.
ctest_all() {
  local dir="$1"
  shift
  local cmd=(ctest --test-dir "$dir" --output-on-failure -j2 "$@")
  if ctest --test-dir "$dir" -N -L redis "$@" | grep -q "Total Tests: [1-9]"; then
    tests/integration/run_with_redis.sh "${cmd[@]}"
  else
    "${cmd[@]}"
  fi
}

stage "0/5 setup: the Debian packages (scripts/setup.sh)"
scripts/setup.sh
command -v clang++ >/dev/null 2>&1 || {
  echo "test.sh: clang++ is missing, which stages 2, 3 and 5 need (scripts/setup.sh installs the clang package)" >&2
  exit 1
}
# The process-gate tests start hundreds of Python children. Where `python3` on PATH is a shim (pyenv's is a
# shell script that finds the interpreter, about 0.25 s a start against 0.05 s), the interpreter's own folder
# goes first on PATH, so that the children start as they would on a machine without the shim.
if py_exe="$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)" && [ -x "$py_exe" ]; then
  py_dir="$(dirname "$py_exe")"
  if [ -x "$py_dir/python3" ] && [ "$(command -v python3)" != "$py_dir/python3" ]; then
    echo "test.sh: python3 on PATH is $(command -v python3), a stand-in for $py_exe; $py_dir goes first on PATH" >&2
    export PATH="$py_dir:$PATH"
  fi
fi
stage "1/5 Release build (build/)"
scripts/build.sh
# The libFuzzer tree (stages 3 and 5) waits for no test: it is built in the background from here on, at the
# lowest priority (nice 19), on the CPU that the tests leave idle (a test waiting on redis-server, the last
# long test alone on one core, a link); stage 3 waits for what is left of it.
if ((fuzz_seconds > 0)); then
  set -m  # its own process group, so that an early exit can stop the whole build (the trap below)
  (
    # The fuzz preset also builds fuzz_inline_protocol, a helper that seeds a corpus: stage 5 takes the
    # Release tree's (fuzz/seed_corpus.sh), so only the three targets that run are built here.
    targets=()
    for t in "${fuzz_targets[@]}"; do targets+=(--target "$t"); done
    nice -n 19 scripts/build.sh --preset fuzz "${targets[@]}" >build-fuzz.log 2>&1 || {
      echo "test.sh: the fuzz build failed; the end of build-fuzz.log:" >&2
      tail -60 build-fuzz.log >&2
      exit 1
    }
  ) &
  fuzz_build=$!
  set +m
  echo "test.sh: building the fuzz targets in the background (nice 19; build-fuzz.log)" >&2
fi
stage "1/5 Release tests"
# The property tests run once with a pinned seed and once with this fresh one.
ADMITSIM_FRESH_SEED="${ADMITSIM_FRESH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
export ADMITSIM_FRESH_SEED
echo "test.sh: the property tests' fresh seed is $ADMITSIM_FRESH_SEED (replay: RC_PARAMS=seed=$ADMITSIM_FRESH_SEED)" >&2
ctest_all build

stage "2/5 sanitizer build (clang++, build-asan/)"
scripts/build.sh --preset asan
stage "2/5 sanitizer tests (ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS)"
# The agreement properties against redis-server run 25 cases a property here (100 in stage 1): under the
# sanitizers they look for memory errors on the same paths, at some twenty times the cost.
ADMITSIM_AGREEMENT_CASES=25 ctest_all build-asan -LE "property-long|cli-long"

stage "3/5 the libFuzzer build (build-fuzz/): what is left of it"
if [ -n "$fuzz_build" ]; then
  wait "$fuzz_build"
  fuzz_build=""
fi
builds=(release=build debug-asan=build-asan)

stage "4/5 determinism across builds: ${builds[*]}"
tests/determinism/cross_build.sh --no-replay --reuse "${builds[@]}"

if ((fuzz_seconds == 0)); then
  stage "5/5 fuzzing skipped (ADMITSIM_FUZZ_SECONDS=0)"
  stage "all green"
  exit 0
fi
stage "5/5 fuzzing: the targets, ${fuzz_seconds}s each, all at once (built in stage 3)"
pids=()
for t in "${fuzz_targets[@]}"; do
  corpus="build-fuzz/corpus/$t"
  artifacts="build-fuzz/artifacts/$t"
  mkdir -p "$artifacts"
  fuzz/seed_corpus.sh "$t" "$corpus"
  "build-fuzz/fuzz/$t" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
    -dict=fuzz/scenario.dict -artifact_prefix="$artifacts/" -print_final_stats=1 \
    "$corpus" >"build-fuzz/$t.log" 2>&1 &
  pids+=($!)
done
fuzz_failed=0
for i in "${!fuzz_targets[@]}"; do
  t="${fuzz_targets[$i]}"
  rc=0
  wait "${pids[$i]}" || rc=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$t.log" | tail -1)"
  corpus_size="$(find "build-fuzz/corpus/$t" -type f | wc -l)"
  if ((rc != 0)); then
    fuzz_failed=1
    echo "fuzz: $t FAILED (exit $rc) after ${runs:-?} executions; the log's end:" >&2
    tail -40 "build-fuzz/$t.log" >&2
    echo "fuzz: the input is in build-fuzz/artifacts/$t/; docs/fuzzing.md says how it becomes a regression test" >&2
  else
    echo "fuzz: $t: ${runs:-?} executions in ${fuzz_seconds}s, corpus $corpus_size inputs, no finding" >&2
  fi
done
((fuzz_failed == 0))
stage "all green"
