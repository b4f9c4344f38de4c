"""A fleet worker's lease client as a child process, written straight to the
line protocol (docs/process-gate.md, "A fleet's client"), for the tests of
admitsim's side of it.

It runs the seed's design: the acquire EVALs a script that drops members
older than a lease (by the caller's wall clock) and adds the token while
fewer than the limit remain, polling every backoff delay until the acquire
timeout; the release is a ZREM. Flags make it misbehave at the N-th request
(counted over the child's whole life, from 1):

  --crash-at N       exit with status 3 instead of answering
  --hang-at N        never answer
  --garbage-at N     answer a line that is not JSON
  --wrong-at N       answer a step that does not fit the request ({"done": "released"} to an acquire)
  --past-at N        answer {"wait_until": now - 1}
  --error-at N       answer {"error": ...}
  --grant-always     read every acquire reply as a grant (a client that believes it holds what it does not)
  --grant-no-call    answer an acquire granted at once, without a call to Redis
  --own-token        add a member named by a counter of its own, not the token admitsim gave
  --exit-restarted   exit with status 4 when started as a restarted worker (generation 1 or more)
  --now-as FORM      pass the caller's clock to the script as FORM: ms (the default), seconds
                     ("1709251200.250"), expiry (now + lease, in ms) or none (the script reads TIME)
  --ahead            run ahead where a request offers it: answer a wait within the promise with the
                     poll that follows it ({"wait_until": T, "then": {"command": [...]}})
  --then-always      attach that "then" to every wait, offered or not (out of protocol where it was not)
"""
import json
import sys
import time

SCRIPTS = {
    "ms": "local now = tonumber(ARGV[1]) ",
    "seconds": "local now = math.floor(tonumber(ARGV[1]) * 1000 + 0.5) ",
    "expiry": "local now = tonumber(ARGV[1]) - tonumber(ARGV[2]) ",
    "none": "local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) ",
}
SCRIPT_TAIL = (
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2])) "
    "if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then "
    "redis.call('ZADD', KEYS[1], now, ARGV[4]) return 1 end return 0"
)


def main(argv):
    flags = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--crash-at", "--hang-at", "--garbage-at", "--wrong-at", "--past-at", "--error-at"):
            flags[a] = int(argv[i + 1])
            i += 2
        elif a == "--now-as" and i + 1 < len(argv) and argv[i + 1] in SCRIPTS:
            flags[a] = argv[i + 1]
            i += 2
        elif a in ("--grant-always", "--grant-no-call", "--own-token", "--exit-restarted", "--ahead",
                   "--then-always"):
            flags[a] = True
            i += 1
        else:
            print("lease_client.py: unknown argument " + a, file=sys.stderr)
            return 2
    n = 0
    settings = None
    ops = {}  # op -> {"kind", "token", "deadline"}
    own = 0
    out = sys.stdout

    def send(answer):
        out.write(json.dumps(answer) + "\n")
        out.flush()

    form = flags.get("--now-as", "ms")
    script = SCRIPTS[form] + SCRIPT_TAIL

    def attempt(op, req):
        member = op["member"]
        wall = req["wall_ms"]
        now = {"ms": str(wall), "seconds": "%d.%03d" % (wall // 1000, wall % 1000),
               "expiry": str(wall + settings["lease_ms"]), "none": "0"}[form]
        return {"command": ["EVAL", script, "1", settings["key"], now, str(settings["lease_ms"]),
                            str(settings["limit"]), member]}

    for line in sys.stdin:
        n += 1
        req = json.loads(line)
        kind = req["type"]
        if flags.get("--crash-at") == n:
            print("lease_client.py: crashing at request %d as asked" % n, file=sys.stderr, flush=True)
            return 3
        if flags.get("--hang-at") == n:
            print("lease_client.py: hanging at request %d as asked" % n, file=sys.stderr, flush=True)
            while True:
                time.sleep(60)
        if flags.get("--garbage-at") == n:
            out.write("this is not json\n")
            out.flush()
            continue
        if flags.get("--error-at") == n:
            send({"error": "lease_client.py: failing at request %d as asked" % n})
            continue
        if flags.get("--past-at") == n and "now" in req:
            send({"wait_until": req["now"] - 1})
            continue
        if kind == "start":
            if "--exit-restarted" in flags and req["generation"] >= 1:
                print("lease_client.py: worker %d restarted (generation %d): exiting as asked"
                      % (req["worker"], req["generation"]), file=sys.stderr, flush=True)
                return 4
            settings = req["settings"]
            ops = {}
            send({"ok": True})
        elif kind == "stop":
            send({"ok": True})
        elif kind == "acquire":
            if flags.get("--wrong-at") == n:
                send({"done": "released"})
                continue
            if "--grant-no-call" in flags:
                send({"done": "granted"})
                continue
            own += 1
            member = "mine-%d" % own if "--own-token" in flags else req["token"]
            op = {"kind": "acquire", "token": req["token"], "member": member,
                  "deadline": req["now"] + settings["acquire_timeout_ms"] * 1_000_000}
            ops[req["op"]] = op
            send(attempt(op, req))
        elif kind == "release":
            ops[req["op"]] = {"kind": "release", "token": req["token"]}
            send({"command": ["ZREM", settings["key"], req["token"]]})
        elif kind in ("reply", "lost"):
            op = ops[req["op"]]
            if op["kind"] == "release":
                del ops[req["op"]]
                send({"done": "lost" if kind == "lost" else "released"})
                continue
            granted = kind == "reply" and req["reply"] == {"int": 1}
            if granted or (kind == "reply" and "--grant-always" in flags):
                del ops[req["op"]]
                send({"done": "granted"})
            elif req["now"] >= op["deadline"]:
                del ops[req["op"]]
                send({"done": "acquire_timeout" if kind == "reply" else "unreachable"})
            else:
                at = min(req["now"] + settings["backoff"].get("delay_ms", 200) * 1_000_000, op["deadline"])
                ahead = req.get("ahead")
                offered = ahead is not None and at <= ahead.get("until", 2**63 - 1 - ahead["wall_base"])
                if ("--ahead" in flags and offered) or "--then-always" in flags:
                    base = ahead["wall_base"] if ahead is not None else req["wall_ms"] * 1_000_000 - req["now"]
                    send({"wait_until": at, "then": attempt(op, {"wall_ms": (at + base) // 1_000_000})})
                else:
                    send({"wait_until": at})
        elif kind == "woke":
            op = ops[req["op"]]
            send(attempt(op, req))
        else:
            send({"error": "lease_client.py: unknown request " + kind})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
