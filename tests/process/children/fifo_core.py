"""A FIFO gate core as a child process, written straight to the line protocol
(docs/process-gate.md), for the tests of admitsim's side of it.

It behaves as admitsim's own core: a slot free and nobody waiting admits,
a full queue refuses, a release promotes the oldest waiter, a waiter that
leaves after promotion won gives its lease back. Flags make it misbehave
at the N-th request (counted over the child's whole life, from 1):

  --crash-at N     exit with status 3 instead of answering
  --hang-at N      never answer
  --garbage-at N   answer a line that is not JSON
  --wrong-at N     answer JSON that does not fit the request
  --error-at N     answer {"error": ...}
  --leak           on cancel after promotion, forget to give the lease back
  --stop-fails     answer stop with {"ok": false} (the child is not reused)
"""
import json
import sys
import time


def promote_next(gate):
    """The freed slot goes to the oldest waiter, if any: its ticket, or None."""
    if not gate["waiting"]:
        return None
    promoted = gate["waiting"].pop(0)
    gate["active"] += 1
    gate["handed"].add(promoted)
    return promoted


def main(argv):
    flags = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--crash-at", "--hang-at", "--garbage-at", "--wrong-at", "--error-at"):
            flags[a] = int(argv[i + 1])
            i += 2
        elif a in ("--leak", "--stop-fails"):
            flags[a] = True
            i += 1
        else:
            print("fifo_core.py: unknown argument " + a, file=sys.stderr)
            return 2
    n = 0
    starts = 0
    gate = None
    out = sys.stdout
    for line in sys.stdin:
        n += 1
        req = json.loads(line)
        if flags.get("--crash-at") == n:
            print("fifo_core.py: crashing at request %d as asked" % n, file=sys.stderr, flush=True)
            return 3
        if flags.get("--hang-at") == n:
            print("fifo_core.py: hanging at request %d as asked" % n, file=sys.stderr, flush=True)
            while True:
                time.sleep(60)
        if flags.get("--garbage-at") == n:
            out.write("this is not json\n")
            out.flush()
            continue
        if flags.get("--wrong-at") == n:
            out.write('{"result":"maybe"}\n')
            out.flush()
            continue
        if flags.get("--error-at") == n:
            out.write(json.dumps({"error": "the gate raised ValueError at request %d" % n}) + "\n")
            out.flush()
            continue
        t = req["type"]
        if t == "start":
            starts += 1
            cfg = req["config"]
            gate = {"max_active": cfg["max_active"], "max_waiting": cfg["max_waiting"],
                    "wait": cfg["wait_deadline_ns"], "active": 0, "waiting": [], "handed": set()}
            ans = {"ok": True}
            print("fifo_core.py: start %d (seed %d, gate %s)" % (starts, req["seed"], req["gate"]), file=sys.stderr)
        elif t == "stop":
            gate = None
            ans = {"ok": not flags.get("--stop-fails", False)}
        elif t == "acquire":
            if gate["active"] < gate["max_active"] and not gate["waiting"]:
                gate["active"] += 1
                ans = {"result": "admitted"}
            elif len(gate["waiting"]) >= gate["max_waiting"]:
                ans = {"result": "queue_full"}
            else:
                gate["waiting"].append(req["ticket"])
                ans = {"result": "queued", "deadline": req["now"] + gate["wait"]}
        elif t == "release":
            if gate["active"] <= 0:
                ans = {"ok": False, "promoted": None}
            else:
                gate["active"] -= 1
                ans = {"ok": True, "promoted": promote_next(gate)}
        elif t == "claim":
            ok = req["ticket"] in gate["handed"]
            gate["handed"].discard(req["ticket"])
            ans = {"claimed": ok}
        elif t in ("expire", "cancel"):
            tk = req["ticket"]
            if tk in gate["waiting"]:
                gate["waiting"].remove(tk)
                ans = {"result": "removed", "promoted": None}
            elif tk in gate["handed"]:
                gate["handed"].discard(tk)
                if flags.get("--leak") and t == "cancel":
                    ans = {"result": "removed", "promoted": None}
                else:
                    gate["active"] -= 1
                    ans = {"result": "handover_released", "promoted": promote_next(gate)}
            else:
                ans = {"result": "not_waiting", "promoted": None}
        else:
            ans = {"error": "unknown request type " + t}
        out.write(json.dumps(ans, separators=(",", ":")) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
