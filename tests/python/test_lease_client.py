"""Tests of the adapter's fleet-client side (gate/process/python: LeaseDriver, redis_shim).

Run from the repository root:

    python3 -m unittest discover -s tests/python -v

Most tests drive ``LeaseDriver.handle`` in-process with request dicts, the
way admitsim's process_client does; ``LeaseSubprocessTest`` starts
``admitsim_lease.py`` as admitsim would and exchanges JSON lines with it.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADAPTER_DIR = os.path.join(ROOT, "gate", "process", "python")
ENTRY = os.path.join(ADAPTER_DIR, "admitsim_lease.py")
CLIENT = os.path.join(ROOT, "examples", "python_lease", "client.py")
sys.path.insert(0, ADAPTER_DIR)

from admitsim_process import LeaseDriver, load_factory, redis_shim  # noqa: E402

redis_shim.install()  # the clients' `import redis.asyncio` finds the adapter's client

MS = 1_000_000
WALL0 = 1_709_251_200_000  # the worker's wall clock at now = 0, in ms


def start(seed=7, worker=0, now=0, wall_ms=WALL0, limit=4, delay_ms=200, timeout_ms=30_000):
    return {"type": "start", "protocol": 1, "role": "lease_client", "seed": seed, "worker": worker,
            "generation": 0, "now": now, "wall_ms": wall_ms,
            "settings": {"key": "k", "limit": limit, "lease_ms": 15_000, "acquire_timeout_ms": timeout_ms,
                         "backoff": {"kind": "fixed", "delay_ms": delay_ms}}}


def op(kind, op_id, token, now, wall_ms=None):
    return {"type": kind, "op": op_id, "token": token, "now": now,
            "wall_ms": WALL0 + now // MS if wall_ms is None else wall_ms}


def reply(op_id, now, value, kind="reply"):
    r = {"type": kind, "op": op_id, "now": now, "wall_ms": WALL0 + now // MS}
    if kind == "reply":
        r["reply"] = value
    return r


def woke(op_id, now):
    return {"type": "woke", "op": op_id, "now": now, "wall_ms": WALL0 + now // MS}


def driver_for(source, factory="make"):
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "client_under_test.py")
    with open(path, "w") as f:
        f.write(textwrap.dedent(source))
    return LeaseDriver(load_factory(path + ":" + factory))


class ExampleClientTest(unittest.TestCase):
    """examples/python_lease/client.py, step by step."""

    def setUp(self):
        self.driver = LeaseDriver(load_factory(CLIENT + ":make_gate"))
        self.assertEqual(self.driver.handle(start()), {"ok": True})

    def tearDown(self):
        self.driver.close()

    def test_acquire_polls_loads_its_script_and_releases(self):
        d = self.driver
        first = d.handle(op("acquire", 1, "w0-1", 0))
        self.assertEqual(first["command"][0], "EVALSHA")
        sha = first["command"][1]
        # The client's own clock, as admitsim sent it, and the token admitsim gave it (uuid4().hex).
        self.assertEqual(first["command"][2:], ["1", "k", str(WALL0), "15000", "4", "w0-1"])
        # NOSCRIPT: the client loads the body and calls it again by its SHA.
        load = d.handle(reply(1, 2 * MS, {"error": "NOSCRIPT No matching script. Please use EVAL."}))
        self.assertEqual(load["command"][:2], ["SCRIPT", "LOAD"])
        self.assertEqual(hashlib.sha1(load["command"][2].encode()).hexdigest(), sha)
        again = d.handle(reply(1, 4 * MS, {"bulk": sha}))
        self.assertEqual(again["command"][:2], ["EVALSHA", sha])
        # The same values: the now the client read for this attempt, before its NOSCRIPT (admitsim
        # recognises a now from any earlier input of the operation).
        self.assertEqual(again["command"][2:], first["command"][2:])
        # Full: it pauses its backoff, on its own timer.
        self.assertEqual(d.handle(reply(1, 6 * MS, {"int": 0})), {"wait_until": 206 * MS})
        retry = d.handle(woke(1, 206 * MS))
        self.assertEqual(retry["command"][0], "EVALSHA")
        self.assertEqual(d.handle(reply(1, 208 * MS, {"int": 1})), {"done": "granted"})
        # The release is the ZREM in its finally.
        self.assertEqual(d.handle(op("release", 2, "w0-1", 300 * MS)), {"command": ["ZREM", "k", "w0-1"]})
        self.assertEqual(d.handle(reply(2, 302 * MS, {"int": 1})), {"done": "released"})

    def test_acquire_gives_up_past_its_budget(self):
        d = self.driver
        d.handle(start(timeout_ms=300))
        d.handle(op("acquire", 1, "w0-1", 0))
        step = d.handle(reply(1, MS, {"int": 0}))
        self.assertEqual(step, {"wait_until": 201 * MS})
        d.handle(woke(1, 201 * MS))
        step = d.handle(reply(1, 202 * MS, {"int": 0}))
        self.assertEqual(step, {"wait_until": 402 * MS})
        d.handle(woke(1, 402 * MS))
        self.assertEqual(d.handle(reply(1, 403 * MS, {"int": 0})), {"done": "acquire_timeout"})

    def test_a_lost_call_is_unreachable_and_a_lost_release_is_lost(self):
        d = self.driver
        d.handle(op("acquire", 1, "w0-1", 0))
        self.assertEqual(d.handle(reply(1, MS, None, kind="lost")), {"done": "unreachable"})
        d.handle(op("acquire", 2, "w0-2", 10 * MS))
        d.handle(reply(2, 11 * MS, {"int": 1}))
        d.handle(op("release", 3, "w0-2", 20 * MS))
        self.assertEqual(d.handle(reply(3, 21 * MS, None, kind="lost")), {"done": "lost"})

    def test_a_wait_within_the_promise_runs_ahead_to_its_wake_up(self):
        # admitsim promises that nothing but the operation's timer reaches the worker until `until`, its
        # wall clock reading (t + wall_base) // 1e6 ms: a wait within the promise comes with the step its
        # wake-up gives, the same step a woke at that instant gives without the promise.
        base = WALL0 * MS + 250_000  # the wall clock is a quarter of a millisecond ahead of whole ms
        plain = LeaseDriver(load_factory(CLIENT + ":make_gate"))
        ahead = self.driver
        try:
            self.assertEqual(plain.handle(start()), {"ok": True})
            for d in (plain, ahead):
                d.handle(op("acquire", 1, "w0-1", 0, wall_ms=base // MS))
                d.handle(reply(1, 2 * MS, {"error": "NOSCRIPT No matching script. Please use EVAL."}))
                d.handle(reply(1, 4 * MS, {"bulk": "x"}))
            full = reply(1, 6 * MS, {"int": 0})
            full["wall_ms"] = (6 * MS + base) // MS
            self.assertEqual(plain.handle(full), {"wait_until": 206 * MS})
            wake = woke(1, 206 * MS)
            wake["wall_ms"] = (206 * MS + base) // MS
            retry = plain.handle(wake)
            self.assertEqual(retry["command"][0], "EVALSHA")
            self.assertEqual(retry["command"][4], str((206 * MS + base) // MS))
            self.assertEqual(ahead.handle(dict(full, ahead={"until": 206 * MS, "wall_base": base})),
                             {"wait_until": 206 * MS, "then": retry})
            # From there on the two are the same client: no woke goes to the one that ran ahead.
            self.assertEqual(ahead.handle(reply(1, 208 * MS, {"int": 1})), plain.handle(reply(1, 208 * MS, {"int": 1})))
            # A wait beyond the promise is a plain wait, and its woke comes as ever.
            for d in (plain, ahead):
                d.handle(op("release", 2, "w0-1", 300 * MS))
                d.handle(reply(2, 302 * MS, {"int": 1}))
                d.handle(op("acquire", 3, "w0-2", 400 * MS))
            beyond = dict(reply(3, 402 * MS, {"int": 0}), ahead={"until": 601 * MS, "wall_base": WALL0 * MS})
            self.assertEqual(ahead.handle(beyond), {"wait_until": 602 * MS})
            self.assertEqual(plain.handle(reply(3, 402 * MS, {"int": 0})), {"wait_until": 602 * MS})
            self.assertEqual(ahead.handle(woke(3, 602 * MS)), plain.handle(woke(3, 602 * MS)))
            # A promise without "until" lasts as long as the wall clock can be read.
            endless = dict(reply(3, 604 * MS, {"int": 0}), ahead={"wall_base": WALL0 * MS})
            self.assertEqual(plain.handle(reply(3, 604 * MS, {"int": 0})), {"wait_until": 804 * MS})
            self.assertEqual(ahead.handle(endless), {"wait_until": 804 * MS, "then": plain.handle(woke(3, 804 * MS))})
            # A promise of no shape is an error.
            self.assertIn("error", ahead.handle(dict(reply(3, 806 * MS, {"int": 0}), ahead={"until": "soon"})))
        finally:
            plain.close()

    def test_protocol_mistakes_are_errors(self):
        d = self.driver
        self.assertIn("error", d.handle(op("release", 1, "w0-9", 0)))          # never granted
        self.assertIn("error", d.handle(reply(5, 0, {"int": 1})))              # no such operation
        d.handle(op("acquire", 2, "w0-1", MS))
        self.assertIn("error", d.handle(op("acquire", 2, "w0-2", MS)))         # open already
        self.assertIn("error", d.handle(reply(2, 0, {"int": 1})))              # time went backwards
        self.assertIn("error", d.handle(reply(2, 2 * MS, {"what": 1})))        # a reply of no shape


class ClientShapesTest(unittest.TestCase):
    def test_acquire_release_methods_and_a_fencing_value(self):
        d = driver_for("""
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                async def acquire(self):
                    return await self.redis.incr("fence")
                async def release(self, fence):
                    await self.redis.delete("fence")
            def make(redis, settings):
                return Client(redis)
        """)
        self.assertEqual(d.handle(start()), {"ok": True})
        self.assertEqual(d.handle(op("acquire", 1, "w0-1", 0)), {"command": ["INCRBY", "fence", "1"]})
        self.assertEqual(d.handle(reply(1, MS, {"int": 7})), {"done": "granted", "value": 7})
        self.assertEqual(d.handle(op("release", 2, "w0-1", 2 * MS)), {"command": ["DEL", "fence"]})
        self.assertEqual(d.handle(reply(2, 3 * MS, {"int": 1})), {"done": "released"})
        d.close()

    def test_a_call_under_wait_for_carries_its_timer_and_ends_at_it(self):
        d = driver_for("""
            import asyncio
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                async def acquire(self):
                    try:
                        return await asyncio.wait_for(self.redis.set("k", "v", nx=True), 1.0)
                    except asyncio.TimeoutError:
                        return False
                async def release(self, _):
                    await self.redis.delete("k")
            def make(redis, settings):
                return Client(redis)
        """)
        d.handle(start())
        self.assertEqual(d.handle(op("acquire", 1, "w0-1", 0)),
                         {"command": ["SET", "k", "v", "NX"], "timeout_at": 1000 * MS})
        # admitsim gave up on the reply at the timer: wait_for's timeout fires and cancels the call.
        self.assertEqual(d.handle(woke(1, 1000 * MS)), {"done": "acquire_timeout"})
        # A reply in time: SET's OK is True.
        self.assertEqual(d.handle(op("acquire", 2, "w0-2", 2000 * MS))["timeout_at"], 3000 * MS)
        self.assertEqual(d.handle(reply(2, 2001 * MS, {"status": "OK"})), {"done": "granted"})
        d.close()

    def test_a_client_waiting_on_nothing_admitsim_sends_is_an_error(self):
        d = driver_for("""
            import asyncio
            class Client:
                async def acquire(self):
                    await asyncio.get_running_loop().create_future()
                async def release(self, _):
                    pass
            def make(redis, settings):
                return Client()
        """)
        d.handle(start())
        answer = d.handle(op("acquire", 1, "w0-1", 0))
        self.assertIn("waits on neither a Redis reply nor a timer", answer["error"])
        d.close()

    def test_a_call_from_a_task_of_the_clients_own_is_an_error(self):
        # A heartbeat the client starts when it is made: its call belongs to no operation admitsim runs.
        d = driver_for("""
            import asyncio
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                    asyncio.get_running_loop().create_task(self.beat())
                async def beat(self):
                    await asyncio.sleep(0.5)
                    await self.redis.ping()
                async def acquire(self):
                    return await self.redis.set("k", "v", nx=True)
                async def release(self, _):
                    pass
            def make(redis, settings):
                return Client(redis)
        """)
        d.handle(start())
        self.assertEqual(d.handle(op("acquire", 1, "w0-1", 0)), {"command": ["SET", "k", "v", "NX"]})
        step = d.handle(reply(1, 1000 * MS, {"status": "OK"}))
        self.assertIn("outside an operation admitsim started", step.get("error", ""))
        d.close()

    def test_what_the_shim_does_not_offer_is_an_error_even_when_caught(self):
        # A pipeline (not offered), its exception swallowed by the client: the run must not be judged on
        # a client that failed for want of the adapter's support.
        d = driver_for("""
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                async def acquire(self):
                    try:
                        self.redis.pipeline()
                    except Exception:
                        return False
                    return True
                async def release(self, _):
                    pass
            def make(redis, settings):
                return Client(redis)
        """)
        d.handle(start())
        self.assertIn("redis.pipeline, which the adapter's Redis client does not offer",
                      d.handle(op("acquire", 1, "w0-1", 0)).get("error", ""))
        d.close()

    def test_a_client_object_the_client_made_itself_is_an_error(self):
        d = driver_for("""
            import redis.asyncio as redis
            class Client:
                async def acquire(self):
                    try:
                        return await redis.Redis(host="localhost").set("k", "v", nx=True)
                    except redis.ConnectionError:
                        return False
                async def release(self, _):
                    pass
            def make(client, settings):
                return Client()
        """)
        d.handle(start())
        self.assertIn("a client object it made itself", d.handle(op("acquire", 1, "w0-1", 0)).get("error", ""))
        d.close()

    def test_tasks_an_operation_starts_are_its_own(self):
        # gather's inner tasks: their calls and timers belong to the operation that made them.
        d = driver_for("""
            import asyncio
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                async def acquire(self):
                    a, b = await asyncio.gather(self.redis.incr("a"), self.redis.incr("b"))
                    return a + b
                async def release(self, _):
                    pass
            def make(redis, settings):
                return Client(redis)
        """)
        d.handle(start())
        self.assertEqual(d.handle(op("acquire", 1, "w0-1", 0)), {"command": ["INCRBY", "a", "1"]})
        self.assertEqual(d.handle(reply(1, MS, {"int": 1})), {"command": ["INCRBY", "b", "1"]})
        self.assertEqual(d.handle(reply(1, 2 * MS, {"int": 2})), {"done": "granted", "value": 3})
        d.close()

    def test_to_thread_runs_inline_at_the_same_instant(self):
        # No real thread: the work runs at once, and the step that follows is the same every time.
        d = driver_for("""
            import asyncio, threading
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                async def acquire(self):
                    name = await asyncio.to_thread(lambda: threading.current_thread().name)
                    return await self.redis.set("k", name)
                async def release(self, _):
                    pass
            def make(redis, settings):
                return Client(redis)
        """)
        d.handle(start())
        self.assertEqual(d.handle(op("acquire", 1, "w0-1", 0)), {"command": ["SET", "k", "MainThread"]})
        d.close()

    def test_time_is_the_workers_wall_clock(self):
        d = driver_for("""
            import time
            class Client:
                def __init__(self, redis):
                    self.redis = redis
                async def acquire(self):
                    return await self.redis.set("t", int(time.time() * 1000))
                async def release(self, _):
                    pass
            def make(redis, settings):
                return Client(redis)
        """)
        d.handle(start())
        # A worker whose clock runs 20 s ahead of virtual time.
        step = d.handle(op("acquire", 1, "w0-1", 5 * MS, wall_ms=WALL0 + 20_005))
        self.assertIn(step["command"][2], (str(WALL0 + 20_005), str(WALL0 + 20_004)))
        d.close()


class RedisShimTest(unittest.TestCase):
    def test_arguments_are_encoded_as_the_client_does(self):
        self.assertEqual(redis_shim.encode_arg(3), b"3")
        self.assertEqual(redis_shim.encode_arg(1.5), b"1.5")
        self.assertEqual(redis_shim.encode_arg("é"), "é".encode())
        for bad in (True, None, object()):
            with self.assertRaises(redis_shim.DataError):
                redis_shim.encode_arg(bad)
        self.assertEqual(redis_shim.words_json([b"ZREM", b"\xff"]), ["ZREM", {"hex": "ff"}])

    def test_replies_are_decoded_as_the_client_does(self):
        v = redis_shim.reply_value
        self.assertEqual(v({"int": 2}), 2)
        self.assertEqual(v({"bulk": "a"}), b"a")
        self.assertEqual(v({"bulk": {"hex": "ff"}}), b"\xff")
        self.assertIsNone(v({"nil": True}))
        self.assertIs(v({"status": "OK"}), True)
        self.assertEqual(v({"status": "QUEUED"}), "QUEUED")
        self.assertIsInstance(v({"error": "NOSCRIPT x"}), redis_shim.NoScriptError)
        self.assertIsInstance(v({"error": "ERR x"}), redis_shim.ResponseError)
        self.assertEqual(v({"array": [{"int": 1}, {"nil": True}]}), [1, None])
        for bad in ({"int": "1"}, {"bulk": 1}, {}, {"int": 1, "nil": True}, [1]):
            with self.assertRaises(ValueError):
                v(bad)

    def test_install_makes_redis_asyncio_the_shim(self):
        import redis.asyncio as r
        from redis.exceptions import ConnectionError as CE
        self.assertIs(r.Redis, redis_shim.Redis)
        self.assertIs(CE, redis_shim.ConnectionError)


class LeaseSubprocessTest(unittest.TestCase):
    """admitsim_lease.py as admitsim starts it: JSON lines on stdin/stdout."""

    def test_a_transcript_through_a_real_child(self):
        child = subprocess.Popen([sys.executable, ENTRY, "client.py:make_gate"], cwd=os.path.dirname(CLIENT),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        requests = [start(), op("acquire", 1, "w0-1", 0), reply(1, MS, {"int": 1}), op("release", 2, "w0-1", 9 * MS),
                    reply(2, 10 * MS, {"int": 1}), {"type": "stop", "now": 11 * MS}]
        out, err = child.communicate("".join(json.dumps(r) + "\n" for r in requests).encode(), timeout=60)
        answers = [json.loads(line) for line in out.decode().splitlines()]
        self.assertEqual(child.returncode, 0, err.decode())
        self.assertEqual(answers[0], {"ok": True})
        self.assertEqual(answers[1]["command"][0], "EVALSHA")
        self.assertEqual(answers[2:], [{"done": "granted"}, {"command": ["ZREM", "k", "w0-1"]},
                                       {"done": "released"}, {"ok": True}])

    def test_a_file_that_cannot_load_exits_2(self):
        child = subprocess.run([sys.executable, ENTRY, "no_such_file.py:make"], capture_output=True, timeout=60)
        self.assertEqual(child.returncode, 2)
        self.assertIn(b"no_such_file.py: no such file", child.stderr)


if __name__ == "__main__":
    unittest.main()
