#!/usr/bin/env bash
# Goal: explore's memory stays flat in the number of seeds, and SIGINT ends a search with the summary of
# the seeds it finished, marked incomplete, and exit 1.
# Method: the peak RSS of 20,000 and of 200,000 seeds of a one-request scenario (they kept about 640 bytes
# per seed, 120 MB more for the larger search); a search of 10^9 seeds interrupted after a second.
# Usage: explore_stream_test.sh BIN_DIR (from the source root).
set -euo pipefail
name=explore_stream_test
bin="$1/admitsim"
source "$(dirname "$0")/lib.sh"
tiny=tests/cli/data/tiny_fifo.json

peak_kib() {  # peak_kib SEEDS: the peak RSS in KiB of a search of SEEDS seeds
  python3 -c '
import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
if rc != 0: sys.exit("explore exited %d" % rc)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
    "$bin" explore "$tiny" --seeds "$1" --jobs 2 --no-shrink --quiet --out "$tmp/mem$1"
}
if ! sanitized; then  # a sanitizer's quarantine grows with the allocations, whatever the search keeps
  small="$(peak_kib 20000)"
  large="$(peak_kib 200000)"
  ((large - small < 16384)) || fail "200,000 seeds took $large KiB at peak, 20,000 seeds $small KiB"
  grep -q '"ran": 200000' "$tmp/mem200000/tiny-explore.json" || fail "the large search did not run every seed"
fi

# SIGINT: the seeds finished so far are summarised, marked incomplete; exit 1.
interrupt "$tmp/out" "$tmp/err" explore "$tiny" --seeds 1000000000 --jobs 2 --out "$tmp/int"
[ "$rc" -eq 1 ] || { cat "$tmp/err" >&2; fail "an interrupted explore exited $rc"; }
summary="$tmp/int/tiny-explore.json"
[ -f "$summary" ] || fail "no summary after SIGINT"
grep -q '"complete": false' "$summary" || fail "the summary is not marked incomplete"
grep -q '"ran": [1-9]' "$summary" || fail "the summary counts no seed"
grep -q '^admitsim: explore: interrupted (SIGINT)' "$tmp/err" || fail "stderr does not say the search was interrupted"
echo "$name: ok"
