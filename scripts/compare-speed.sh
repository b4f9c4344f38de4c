#!/usr/bin/env bash
# Usage: scripts/compare-speed.sh OLD_ADMITSIM NEW_ADMITSIM [ROUNDS]   (medians of alternating wall times)
# Alternating runs of two admitsim binaries: bench_fifo (run) and bench_explore (explore --seeds 500 --jobs 1).
set -u
old="$(realpath "$1")"; new="$(realpath "$2")"; n="${3:-5}"
cd "$(dirname "$0")/.."
t() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo "$(( (e - s) / 1000000 ))e-3"; }
for i in $(seq 1 "$n"); do
  for b in old new; do
    bin="${!b}"
    rm -rf /tmp/sp-$b; mkdir -p /tmp/sp-$b
    f=$(t "$bin" run scenarios/bench_fifo.json --out /tmp/sp-$b/f.json -q)
    x=$(t "$bin" explore scenarios/bench_explore.json --seeds 500 --jobs 1 --out /tmp/sp-$b/x --quiet)
    echo "$b fifo $f explore $x"
  done
done | tee /tmp/compare-speed.txt
python3 - <<'PY'
import statistics
r={}
for l in open('/tmp/compare-speed.txt'):
    b,_,f,_,x=l.split(); r.setdefault(b,{'fifo':[],'explore':[]}); r[b]['fifo'].append(float(f)); r[b]['explore'].append(float(x))
for k in ('fifo','explore'):
    o=statistics.median(r['old'][k]); n=statistics.median(r['new'][k])
    print(f"{k}: old median {o:.3f}s new median {n:.3f}s ratio new/old {n/o:.3f}")
PY
