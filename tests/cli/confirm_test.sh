#!/usr/bin/env bash
# admitsim confirm (docs/confirm.md) against the redis-server on PATH, each run on servers of its own, at a
# tenth of real time: the catalogue's counterexamples of four fault kinds (a skewed clock, a paused holder,
# a restart, a failover) confirmed, liveness broken by each of its rules confirmed, and the same scenarios' holding designs (and a fleet whose holders crash,
# and one cut off from Redis) not confirmed; a run too fast for its timing said to have strayed; a report as input (its seed); what cannot be made real yet, and a server that cannot start,
# inconclusive; bad options refused with one line; SIGINT ending the run with the report marked, and
# nothing left behind: no server, no folder (TMPDIR is the test's own).
set -euo pipefail
bin="$1/admitsim"
name=confirm
source "$(dirname "$0")/lib.sh"
confirm_tmpdir

# confirm WANT_RC OUT.json ARGS...: runs admitsim confirm (120 s at most).
confirm() {
  local want="$1" out="$2"; shift 2
  local rc=0
  timeout 120 "$bin" confirm "$@" --time-scale "${scale:-0.1}" --out "$out" >"$tmp/stdout" 2>"$tmp/err" </dev/null || rc=$?
  [ "$rc" -eq "$want" ] || { cat "$tmp/err" >&2; fail "exit $rc (124: it hung), wanted $want: confirm $*"; }
}
# verdict OUT.json RUN: the run's verdict in the report.
verdict() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["runs"][sys.argv[2]]["verdict"])' "$1" "$2"; }
expect_verdict() {
  local got
  got="$(verdict "$1" "$2")"
  [ "$got" = "$3" ] || { cat "$tmp/err" >&2; fail "$1 [$2]: $got, wanted $3"; }
}

# Confirmed: each kind of fault, the simulated invariant broken on the real server.
confirm 0 "$tmp/skew.json" scenarios/clock_skew.json --variant seed
expect_verdict "$tmp/skew.json" seed confirmed
python3 - "$tmp/skew.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]
p = r["invariants"]["portal_inflight_le_cap"]
assert not p["holds"] and p["peak"] > p["bound"] == 4, p
assert "requests at work at once at the portal" in p["first_violation"]["detail"], p
assert r["metrics"]["stopped_at_break"] is True, r
assert r["redis_server"], r
PY
confirm 0 "$tmp/pause.json" scenarios/paused_holder.json --variant seed
expect_verdict "$tmp/pause.json" seed confirmed
confirm 0 "$tmp/restart.json" scenarios/redis_restart.json --variant seed
expect_verdict "$tmp/restart.json" seed confirmed
python3 - "$tmp/restart.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]["timing"]["faults"]
assert [x["kind"] for x in f] == ["redis_restart"], f
assert f[0]["achieved_ns"] >= f[0]["intended_ns"] and f[0]["late_real_ns"] >= 0, f
# Its end: the new server answered after its start, which takes real time.
assert f[0]["back_achieved_ns"] > f[0]["back_intended_ns"] and f[0]["back_late_real_ns"] > 0, f
PY

# A run whose schedule strayed says so: at a hundredth of real time the new server's start comes back later
# than the protocol's margin (a twentieth of a 150 ms lease) allows. Whether the break still shows then is a
# matter of that timing: exit 0 (confirmed) or 1 (not), the stray said either way.
rc=0
timeout 120 "$bin" confirm scenarios/redis_restart.json --variant seed --time-scale 0.01 --out "$tmp/fast.json" \
  >"$tmp/stdout" 2>"$tmp/err" </dev/null || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || { cat "$tmp/err" >&2; fail "a hundredth of real time: exit $rc, wanted 0 or 1"; }
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]["timing"]; assert t["late_beyond_margin"] is True and t["margin_real_ns"] == 7500000, t' "$tmp/fast.json"
grep -qF "its timing strayed" "$tmp/err" || fail "the stray timing is not said: $(cat "$tmp/err")"

# Not confirmed: the designs the simulation finds holding, under the same faults.
confirm 0 "$tmp/skew_server.json" scenarios/clock_skew.json --variant server_time
expect_verdict "$tmp/skew_server.json" server_time not_confirmed
confirm 0 "$tmp/grace.json" scenarios/redis_restart.json --variant restart_grace
expect_verdict "$tmp/grace.json" restart_grace not_confirmed
confirm 0 "$tmp/crash.json" scenarios/crashed_holder.json --variant seed
expect_verdict "$tmp/crash.json" seed not_confirmed
python3 - "$tmp/crash.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]["metrics"]
assert m["crashed_workers"] == 2 and m["items"] == 150, m
PY

# A report as input: its scenario and its seed.
"$bin" run scenarios/paused_holder.json --seed 21 --out "$tmp/report.json" -q
confirm 0 "$tmp/from_report.json" "$tmp/report.json" --variant seed
expect_verdict "$tmp/from_report.json" seed confirmed
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["seed"] == 21' "$tmp/from_report.json"

# A failover: the replica, two seconds behind, never saw the first four grants; once promoted it grants
# them again while the first four still work, as simulated.
confirm 0 "$tmp/failover.json" scenarios/redis_failover.json --variant seed
expect_verdict "$tmp/failover.json" seed confirmed
python3 - "$tmp/failover.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]
p = r["invariants"]["portal_inflight_le_cap"]
assert not p["holds"] and p["bound"] == 4 and p["peak"] == 5, p
assert 13_000_000_000 <= p["first_violation"]["at_ns"] < 14_000_000_000, p
assert [x["kind"] for x in r["timing"]["faults"]] == ["redis_failover"], r["timing"]
PY
# The same failover under wait_ack, whose client works under a grant only once WAIT 1 says a replica holds
# it (scaled, as the client's other durations): not confirmed, as simulated; its WAITs counted the replica
# the run keeps all along (and starts again after the failover), so every item was worked.
confirm 0 "$tmp/wait_ack.json" scenarios/redis_failover.json --variant wait_ack
expect_verdict "$tmp/wait_ack.json" wait_ack not_confirmed
python3 - "$tmp/wait_ack.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["wait_ack"]["real_runs"][0]
assert r["metrics"]["completed"] == 8 and r["invariants"]["liveness"]["holds"], r
assert r["invariants"]["liveness"]["grants"] >= 8, r["invariants"]["liveness"]
assert [x["kind"] for x in r["timing"]["faults"]] == ["redis_failover"], r["timing"]
PY
# A partition of Redis, then of one worker: the workers fail closed, as simulated.
confirm 0 "$tmp/partition.json" scenarios/redis_partition.json --variant seed
expect_verdict "$tmp/partition.json" seed not_confirmed
python3 - "$tmp/partition.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]
assert [x["kind"] for x in r["timing"]["faults"]] == ["partition", "partition"], r["timing"]
assert r["metrics"]["items"] == 150 and r["metrics"]["deferred"] + r["metrics"]["completed"] >= 150, r["metrics"]
PY

# The permit gate's own count broken on the real server: a protocol that reaps nothing leaves the crashed
# holders' permits in the set, and admits a fourth live one beside them (simulated at 8.23 s). In real time:
# at a tenth of it, which workers hold a permit at their crash drifts from the simulated run.
# Five runs at most (a confirmed break stops them): on a loaded machine the crashes' timing can drift too.
scale=1 confirm 0 "$tmp/unreaped.json" tests/cli/data/unreaped/scenario.json --runs 5
expect_verdict "$tmp/unreaped.json" unreaped confirmed
python3 - "$tmp/unreaped.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["unreaped"]["real_runs"][-1]  # the one that confirmed
g = r["invariants"]["gate_inflight_le_cap"]
assert not g["holds"] and g["peak"] == 5 and g["bound"] == 4, g
assert 8_000_000_000 <= g["first_violation"]["at_ns"] <= 12_000_000_000, g
assert "members in the holders key at the server (ZCARD " in g["first_violation"]["detail"], g
PY

# A protocol whose holders live at a key of their own (permit_ids: a hash at {key}:taken) is watched there.
python3 - scenarios/matrix/lease_base.json "$PWD/scenarios/protocols/permit_ids/protocol.json" "$tmp/ids.scenario.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["seed"] = 3
sc["gate"]["protocol"] = sys.argv[2]
json.dump(sc, open(sys.argv[3], "w"))
PY
confirm 0 "$tmp/ids.json" "$tmp/ids.scenario.json"
expect_verdict "$tmp/ids.json" permit_ids not_confirmed
python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["runs"]["permit_ids"]["real_runs"][0]["invariants"]["gate_inflight_le_cap"]; assert g["peak"] == g["bound"] == 4, g' "$tmp/ids.json"

# What a client does when a renewal reports its permit lost (client.on_renewal_lost), made real: a restart
# without persistence at 3 s forgets the four permits held; at their next renewal the holders crash and come
# back (crash_process), give their request up (abort_request), or finish it and take no more (stop_new_work),
# as simulated (the portal's cap is wide, so nothing breaks and the runs go to their end).
for pol in crash_process abort_request stop_new_work; do
  python3 - "$pol" "$PWD" "$tmp" <<'PY'
import json, os, sys
pol, root, tmp = sys.argv[1:]
p = json.load(open(os.path.join(root, "scenarios/designs/stop_new_work.json")))
for s in p["scripts"].values():
    s["file"] = os.path.normpath(os.path.join(root, "scenarios/designs", s["file"]))
p["name"] = "renewal_" + pol
p["client"] = {"on_renewal_lost": pol, **({"restart_after": "2s"} if pol == "crash_process" else {})}
json.dump(p, open(os.path.join(tmp, pol + ".protocol.json"), "w"))
sc = json.load(open(os.path.join(root, "scenarios/matrix/lease_base.json")))
sc["seed"] = 1
sc["gate"]["protocol"] = pol + ".protocol.json"
sc["service"].update({"portal_cap": 100, "service_time": "6s"})
sc["workload"] = {"arrivals": [{"kind": "constant", "count": 16, "every": "250ms"}]}
sc["faults"] = {"schedule": [{"at": "3s", "kind": "redis_restart", "persistence": "none"}]}
json.dump(sc, open(os.path.join(tmp, pol + ".scenario.json"), "w"))
PY
  confirm 0 "$tmp/$pol.json" "$tmp/$pol.scenario.json"
  expect_verdict "$tmp/$pol.json" "renewal_$pol" not_confirmed
done
python3 - "$tmp" <<'PY'
import json, sys
m = lambda pol: json.load(open(f"{sys.argv[1]}/{pol}.json"))["runs"]["renewal_" + pol]["real_runs"][0]["metrics"]
c, a, s = m("crash_process"), m("abort_request"), m("stop_new_work")
assert c["crashed_workers"] == 4 and c["completed"] == 12, c
assert a["aborted"] == 4 and a["completed"] == 12 and a["crashed_workers"] == 0, a
assert s["retired_workers"] == 4 and s["completed"] == 16, s
PY

# A client-timeout burst: the catalogue's matrix base with process_grace, whose client releases at its read
# timeout while the work goes on; simulated, the portal sees more than its cap from about 21 s.
python3 - scenarios/matrix/lease_base.json "$PWD/scenarios/designs/process_grace/protocol.json" "$tmp/burst.scenario.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["seed"] = 0
sc["gate"]["protocol"] = sys.argv[2]
sc["faults"] = {"schedule": [{"at": "5s", "kind": "client_timeout_burst", "client_timeout": "2s", "duration": "20s"}]}
json.dump(sc, open(sys.argv[3], "w"))
PY
confirm 0 "$tmp/burst.json" "$tmp/burst.scenario.json"
expect_verdict "$tmp/burst.json" process_grace confirmed
python3 - "$tmp/burst.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["process_grace"]["real_runs"][0]
assert [x["kind"] for x in r["timing"]["faults"]] == ["client_timeout_burst"], r["timing"]
assert 15_000_000_000 <= r["invariants"]["portal_inflight_le_cap"]["first_violation"]["at_ns"] <= 25_000_000_000, r
PY

# run_fleet's worker loop (fleet.on_acquire_timeout requeue_and_exit): an acquire that gives up under the
# partitions puts its item back and its worker exits, as simulated. Which workers do is a matter of timing:
# simulated, five of six exit and the last ends every item; a real run may lose the sixth too (liveness).
# So the scenario checks the caps alone (checks.invariants), and its real run watches nothing else.
python3 - scenarios/redis_partition.json "$tmp/requeue.scenario.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["fleet"]["on_acquire_timeout"] = "requeue_and_exit"
sc["gate"]["variant"] = ["seed"]
sc["checks"] = {"invariants": ["portal_inflight_le_cap", "gate_inflight_le_cap"]}
sc.pop("expect")
json.dump(sc, open(sys.argv[2], "w"))
PY
confirm 0 "$tmp/requeue.json" "$tmp/requeue.scenario.json"
expect_verdict "$tmp/requeue.json" seed not_confirmed
python3 - "$tmp/requeue.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]
m, l = r["metrics"], r["invariants"]["liveness"]
assert m["requeued"] >= 1 and m["deferred"] == 0, m
assert l["watched"] is False and l["holds"] and l["refusals"] == 0, l
PY

# liveness, by the simulator's rules, watched on the real server:
# - a restart without persistence wipes permit_ids' counter of free permits, and every acquire after it is
#   refused while no permit is live, for longer than four leases (refused_with_free_capacity); the variant
#   that runs its set-up again serves at once (its break is of the portal's cap, and its liveness holds);
# - in a 40 s Redis outage every worker of run_fleet's loop gives up and exits, leaving the items in the
#   queue (items_never_ended);
# - a release that removes nothing leaves permits scored a thousand leases ahead live one lease after the
#   end (permits_left).
confirm 0 "$tmp/live_ids.json" scenarios/protocol_permit_ids.json
expect_verdict "$tmp/live_ids.json" permit_ids confirmed
expect_verdict "$tmp/live_ids.json" permit_ids_resetup confirmed
python3 - "$tmp/live_ids.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
l = runs["permit_ids"]["real_runs"][-1]["invariants"]["liveness"]
assert not l["holds"] and l["first_violation"]["rule"] == "refused_with_free_capacity", l
assert l["bound_ns"] == 24_000_000_000 and l["longest_refused_with_free_capacity_ns"] > l["bound_ns"], l
assert l["grants"] >= 3 and l["refusals_with_free_capacity"] > 0, l
assert "while at most 0 of the limit 3 permits were live by the server's clock" in l["first_violation"]["detail"], l
assert "liveness broke on redis-server" in runs["permit_ids"]["why"], runs["permit_ids"]["why"]
r = runs["permit_ids_resetup"]["real_runs"][-1]["invariants"]
assert r["liveness"]["holds"] and not r["portal_inflight_le_cap"]["holds"], r
PY
confirm 0 "$tmp/live_fleet.json" scenarios/run_fleet_surge.json
expect_verdict "$tmp/live_fleet.json" seed confirmed
python3 - "$tmp/live_fleet.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][-1]
l = r["invariants"]["liveness"]
assert not l["holds"] and l["first_violation"]["rule"] == "items_never_ended", l
assert "exited when an acquire gave up" in l["first_violation"]["detail"], l
assert r["metrics"]["requeued"] == 12 and r["metrics"]["completed"] < r["metrics"]["items"] == 2000, r["metrics"]
PY
confirm 0 "$tmp/leaky.json" tests/cli/data/leaky/scenario.json
expect_verdict "$tmp/leaky.json" leaky confirmed
python3 - "$tmp/leaky.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["leaky"]["real_runs"][-1]
l = r["invariants"]["liveness"]
assert not l["holds"] and l["first_violation"]["rule"] == "permits_left", l
assert l["first_violation"]["detail"].startswith("2 permits still held one lease after the end"), l
assert r["metrics"]["completed"] == 2 and r["metrics"]["deferred"] == 2, r["metrics"]
PY

# The portal's service.on_client_close: the same fleet and traffic, whose clients release at a 3s read
# timeout while their requests run on, break the cap when the work goes on (keep_work) and hold it when
# the portal stops the work as its client closes (free_slot), as simulated.
confirm 0 "$tmp/overshoot.json" scenarios/client_timeout_overshoot.json --variant seed
expect_verdict "$tmp/overshoot.json" seed confirmed
confirm 0 "$tmp/frees.json" scenarios/client_close_frees_slot.json --variant seed
expect_verdict "$tmp/frees.json" seed not_confirmed
python3 - "$tmp/frees.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["seed"]["real_runs"][0]
assert r["metrics"]["crashed_workers"] == 2 and r["invariants"]["portal_inflight_le_cap"]["peak"] == 4, r
PY

# A client woken by pub/sub (wake_on), listening on a connection of its own through its worker's link: the
# cap and liveness hold, as simulated, and the messages do wake it: its waiters' herd reads several times
# the refusals of the same protocol polling alone (simulated, about three times the calls).
confirm 0 "$tmp/pubsub.json" scenarios/protocol_pubsub_waiter.json
expect_verdict "$tmp/pubsub.json" pubsub_waiter not_confirmed
python3 - "$PWD" "$tmp" <<'PY'
import json, os, sys
root, tmp = sys.argv[1:]
p = json.load(open(os.path.join(root, "scenarios/protocols/pubsub_waiter/protocol.json")))
for s in p["scripts"].values():
    s["file"] = os.path.normpath(os.path.join(root, "scenarios/protocols/pubsub_waiter", s["file"]))
p["client"].pop("wake_on")
p["name"] = "polling"
json.dump(p, open(os.path.join(tmp, "polling.protocol.json"), "w"))
sc = json.load(open(os.path.join(root, "scenarios/protocol_pubsub_waiter.json")))
sc["gate"]["protocol"] = "polling.protocol.json"
json.dump(sc, open(os.path.join(tmp, "polling.scenario.json"), "w"))
PY
confirm 0 "$tmp/polling.json" "$tmp/polling.scenario.json"
expect_verdict "$tmp/polling.json" polling not_confirmed
python3 - "$tmp/pubsub.json" "$tmp/polling.json" <<'PY'
import json, sys
woken = json.load(open(sys.argv[1]))["runs"]["pubsub_waiter"]["real_runs"][-1]
polled = json.load(open(sys.argv[2]))["runs"]["polling"]["real_runs"][-1]
for r in (woken, polled):
    assert r["invariants"]["liveness"]["holds"] and r["metrics"]["completed"] == 80, r
a, b = woken["invariants"]["liveness"]["refusals"], polled["invariants"]["liveness"]["refusals"]
assert a > 2 * b, (a, b)
PY

# Two failovers, each promoting a replica synced with the primary before it (the second started by the
# first): process_grace's grace begins again with each new process, and its one item is never granted.
confirm 0 "$tmp/failover2.json" tests/cli/data/two_failovers.json
expect_verdict "$tmp/failover2.json" process_grace confirmed
python3 - "$tmp/failover2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"]["process_grace"]["real_runs"][-1]
f = r["timing"]["faults"]
assert [x["kind"] for x in f] == ["redis_failover", "redis_failover"], f
assert all(x["back_achieved_ns"] >= x["back_intended_ns"] for x in f), f
l = r["invariants"]["liveness"]
assert not l["holds"] and l["first_violation"]["rule"] == "never_granted" and l["grants"] == 0, l
PY

# Inconclusive: a failover during the downtime of the one before it; more failovers than a
# real run makes; a server that cannot start.
python3 - scenarios/redis_failover.json "$tmp/close_failovers.json" "$tmp/many_failovers.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["gate"].pop("protocol")
sc.pop("expect")
sc["faults"]["schedule"].append({"at": "11.2s", "kind": "redis_failover", "duration": "500ms"})
json.dump(sc, open(sys.argv[2], "w"))
sc["faults"]["schedule"] = [{"at": f"{11 + i}s", "kind": "redis_failover", "duration": "100ms"} for i in range(17)]
json.dump(sc, open(sys.argv[3], "w"))
PY
confirm 1 "$tmp/close.json" "$tmp/close_failovers.json" --variant seed
expect_verdict "$tmp/close.json" seed inconclusive
grep -qF "the failover at 11.2s could not be made: it came during the downtime of the failover before it" \
  "$tmp/err" || fail "the close failover's reason: $(cat "$tmp/err")"
confirm 1 "$tmp/many.json" "$tmp/many_failovers.json" --variant seed
expect_verdict "$tmp/many.json" seed inconclusive
grep -qF "not made real yet: /faults/schedule/16: a real run makes at most 16 failovers" "$tmp/err" ||
  fail "the 17th failover's reason: $(cat "$tmp/err")"
# Too few file descriptors for the fleet's connections (three a worker here): inconclusive, saying so.
python3 - scenarios/clock_skew.json "$tmp/wide.scenario.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["fleet"]["workers"] = 100
sc.pop("expect")
json.dump(sc, open(sys.argv[2], "w"))
PY
rc=0
(ulimit -n 200 && exec timeout 120 "$bin" confirm "$tmp/wide.scenario.json" --variant seed --time-scale 0.1 \
  --out "$tmp/wide.json" >"$tmp/stdout" 2>"$tmp/err" </dev/null) || rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/err" >&2; fail "too few descriptors: exit $rc, wanted 1"; }
expect_verdict "$tmp/wide.json" seed inconclusive
grep -qF "file descriptors, and the limit is 200 (ulimit -n)" "$tmp/err" || fail "the descriptors' reason: $(cat "$tmp/err")"
confirm 1 "$tmp/noserver.json" scenarios/clock_skew.json --variant seed --redis-server "$tmp/no-such-redis-server"
expect_verdict "$tmp/noserver.json" seed inconclusive
grep -qF "redis-server could not start" "$tmp/err" || fail "the missing server: $(cat "$tmp/err")"

# Bad input: one line, exit 2, nothing run.
expect_rc 2 "$bin" confirm scenarios/clock_skew.json --time-scale 0
one_line "--time-scale: expected a number from 0.01 to 100"
expect_rc 2 "$bin" confirm scenarios/clock_skew.json --runs 0
one_line "--runs"
expect_rc 2 "$bin" confirm scenarios/clock_skew.json --variant nope
one_line "--variant: expected one of the gate's runs (seed, server_time)"
expect_rc 2 "$bin" confirm scenarios/lab_fifo.json
one_line "/gate: expected one lease gate"

# SIGINT: the run ends, the report says so, exit 1.
interrupt "$tmp/int.stdout" "$tmp/int.err" confirm scenarios/clock_skew.json --variant server_time --out "$tmp/int.json"
[ "$rc" -eq 1 ] || { cat "$tmp/int.err" >&2; fail "SIGINT: exit $rc, wanted 1"; }
grep -qF "interrupted (SIGINT or SIGTERM)" "$tmp/int.err" || fail "SIGINT: $(cat "$tmp/int.err")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["interrupted"] is True and d["runs"]["server_time"]["verdict"] == "inconclusive", d' "$tmp/int.json"

# Nothing left behind: every server stopped, every folder removed.
nothing_left_behind
echo "$name: ok"
