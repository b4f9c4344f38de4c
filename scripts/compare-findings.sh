#!/usr/bin/env bash
# Usage: scripts/compare-findings.sh OLD_ADMITSIM NEW_ADMITSIM [SEEDS]   (prints "same findings: N differ: M"; exit 1 when any differ)
# Compares the findings of explore from the same seeds, old binary vs new: summaries compared without
# kernel counts (events, diagnostics), wall-clock figures and folder names.
set -u
old="$(realpath "$1")"; new="$(realpath "$2")"; seeds="${3:-40}"
cd "$(dirname "$0")/.."
rm -rf /tmp/compare-findings; mkdir -p /tmp/compare-findings
for f in scenarios/explore_*.json tests/explore/mutants/*.json; do
  n=$(basename "$f" .json)
  for b in old new; do
    "${!b}" explore "$f" --seeds "$seeds" --jobs 2 --out /tmp/compare-findings/$b-$n --quiet >/dev/null 2>&1; echo "$?" > /tmp/compare-findings/$b-$n.rc
  done
done
python3 - <<'PY'
import json,glob,os,re
def norm(o):
    if isinstance(o,dict):
        return {k:norm(v) for k,v in o.items() if k not in ('events','diagnostics','wall_s','seconds','seeds_per_second','elapsed_s','out','file','replay','path','folder') and not k.endswith('_s')}
    if isinstance(o,list): return [norm(x) for x in o]
    if isinstance(o,str): return re.sub(r'/tmp/compare-findings/(old|new)-','/tmp/compare-findings/X-',o)
    return o
ok=bad=0
for d in sorted(glob.glob('/tmp/compare-findings/old-*')):
    if d.endswith('.rc'): continue
    n=d[len('/tmp/compare-findings/old-'):]
    rc=(open(d+'.rc').read(),open('/tmp/compare-findings/new-'+n+'.rc').read())
    so=sorted(glob.glob(d+'/*-explore.json')); sn=sorted(glob.glob('/tmp/compare-findings/new-'+n+'/*-explore.json'))
    if not so or not sn or rc[0]!=rc[1]: print('MISSING/RC',n,rc,so,sn); bad+=1; continue
    a=norm(json.load(open(so[0]))); b=norm(json.load(open(sn[0])))
    if a==b: ok+=1
    else:
        bad+=1; print('DIFF',n)
        for k in a:
            if a.get(k)!=b.get(k): print('  key',k, str(a.get(k))[:200], '|', str(b.get(k))[:200])
print('same findings:',ok,'differ:',bad)
import sys
sys.exit(1 if bad else 0)
PY
