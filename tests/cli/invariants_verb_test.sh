#!/usr/bin/env bash
# admitsim invariants: the invariant table as a user reads it, per world, and a bad --world refused.
set -euo pipefail
bin="$1/admitsim"
name=invariants_verb
. "$(dirname "$0")/lib.sh"

expect_rc 0 "$bin" invariants
# Every row of sim/check/invariants.hpp, each once (the table's names, read from the source).
src="$(dirname "$0")/../../sim/check/invariants.hpp"
rows="$(grep -oE '^    \{"[a-z_]+"' "$src" | grep -oE '[a-z_]+' | sort)"
[ -n "$rows" ] || fail "no rows read from $src"
listed="$(awk '{print $1}' "$tmp/out" | sort)"
[ "$rows" = "$listed" ] || fail "listed $(echo $listed) but the table has $(echo $rows)"
grep -qE '^gate_inflight_le_cap +fifo,lease +the gate never counts' "$tmp/out" || fail "gate_inflight_le_cap row: $(cat "$tmp/out")"

expect_rc 0 "$bin" invariants --world lease
grep -q '^expired_leases_reaped ' "$tmp/out" || fail "--world lease lacks expired_leases_reaped"
if grep -q '^fifo_order ' "$tmp/out"; then fail "--world lease lists fifo_order"; fi

expect_rc 0 "$bin" invariants --world fifo
grep -q '^fifo_order ' "$tmp/out" || fail "--world fifo lacks fifo_order"
if grep -q '^expired_leases_reaped ' "$tmp/out"; then fail "--world fifo lists expired_leases_reaped"; fi

expect_rc 2 "$bin" invariants --world mars
one_line 'admitsim: --world: expected fifo or lease, got "mars"'
echo "$name: ok"
