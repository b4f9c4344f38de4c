#!/usr/bin/env bash
# A team's protocol at the command line: a scenario naming a protocol file runs, explores, shrinks and
# replays like any other; a protocol whose file is missing is refused with the JSON path; a script
# error is an inconclusive run that names the script and its line.
set -euo pipefail
bin="$1/admitsim"
name=protocol_files
. "$(dirname "$0")/lib.sh"
root="$(cd "$(dirname "$0")/../.." && pwd)"

expect_rc 0 "$bin" run "$root/scenarios/protocol_expiry_scored.json" --out "$tmp/r.json"
grep -q 'expiry_scored\] seed=20: violation (as expected)' "$tmp/out" "$tmp/err" || fail "run: $(cat "$tmp/out" "$tmp/err")"
expect_rc 0 "$bin" replay "$tmp/r.json"

# explore finds the expected break and shrinks it; the shrunk scenario carries the protocol inline and
# reproduces it with no protocol file beside it.
# (exit 1: it also finds the renewal variant breaking under the longest pauses, which the scenario does not expect.)
rc=0
timeout 60 "$bin" explore "$root/scenarios/protocol_expiry_scored.json" --seeds 40 --out "$tmp/x" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -le 1 ] || fail "explore exited $rc: $(cat "$tmp/err")"
min="$(ls "$tmp"/x/*-expiry_scored-min.json | head -1)"
[ -n "$min" ] || fail "explore shrank nothing: $(cat "$tmp/err")"
grep -q '"source": "-- An expiry-scored lease semaphore: acquire.' "$min" || fail "the shrunk scenario lacks the protocol's Lua"
mkdir "$tmp/alone" && cp "$min" "$tmp/alone/min.json"
expect_rc 0 "$bin" run "$tmp/alone/min.json" --out "$tmp/alone/r.json"

# A protocol file whose Lua file is missing: exit 2, one line, the JSON path of the reference.
mkdir "$tmp/p" && cp "$root"/scenarios/protocols/expiry_scored/*.lua "$tmp/p/"
sed 's/"acquire.lua"/"missing.lua"/' "$root/scenarios/protocols/expiry_scored/protocol.json" >"$tmp/p/protocol.json"
sed -e 's|"protocols/expiry_scored/protocol.json"|"p/protocol.json"|' "$root/scenarios/protocol_expiry_scored.json" >"$tmp/s.json"
expect_rc 2 "$bin" run "$tmp/s.json" --out "$tmp/s.out.json"
one_line "/gate/protocol: $tmp/p/protocol.json: /scripts/acquire/file: expected a readable Lua file: $tmp/p/missing.lua: cannot open the file"
[ ! -e "$tmp/s.out.json" ] || fail "a refused scenario left a report"

# A client policy word the loader does not know (client.on_give_up takes "stop" or "release"): exit 2, one line.
sed 's/"on_client_timeout": "release"/"on_client_timeout": "release", "on_give_up": "leave_line"/' \
  "$root/scenarios/protocols/expiry_scored/protocol.json" >"$tmp/p/protocol.json"
expect_rc 2 "$bin" run "$tmp/s.json" --out "$tmp/s.out.json"
one_line "/gate/protocol/client/on_give_up: expected one of \"stop\", \"release\", got \"leave_line\""
[ ! -e "$tmp/s.out.json" ] || fail "a refused scenario left a report"

# A script that fails (ARGV[2] is nil when the acquire passes two arguments): inconclusive, exit 1, named.
sed 's/"{lease_ms}", "{limit}", "{token}"\], "granted_when"/"{lease_ms}", "{token}"], "granted_when"/' \
  "$root/scenarios/protocols/expiry_scored/protocol.json" >"$tmp/p/protocol.json"
expect_rc 1 "$bin" run "$tmp/s.json" --out "$tmp/s.out.json"
grep -q 'inconclusive (script_error): the protocol.s acquire script "acquire" (acquire.lua) failed at line 26' \
  "$tmp/out" "$tmp/err" || fail "no script error named: $(cat "$tmp/out" "$tmp/err")"
grep -q '"reason": "script_error"' "$tmp/s.out.json" || fail "the report lacks the script error"
