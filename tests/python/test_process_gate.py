"""Tests of the Python process-gate adapter (gate/process/python).

Run from the repository root:

    python3 -m unittest discover -s tests/python -v

Most tests drive ``FifoDriver.handle`` in-process with request dicts; the
``SubprocessTest`` cases start ``admitsim_fifo.py`` as admitsim would and
exchange JSON lines with it.
"""

import asyncio
import collections
import contextlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADAPTER_DIR = os.path.join(ROOT, "gate", "process", "python")
ENTRY = os.path.join(ADAPTER_DIR, "admitsim_fifo.py")
EXAMPLES = os.path.join(ROOT, "examples", "python_gate")
sys.path.insert(0, ADAPTER_DIR)

from admitsim_process import FifoDriver, load_factory  # noqa: E402

GATE = os.path.join(EXAMPLES, "gate.py")
LEAKY = os.path.join(EXAMPLES, "leaky_gate.py")
from protocol_requests import MS, acquire, cancel, claim, expire, release, start, stop  # noqa: E402


# The transcript of the brief: one slot, one place in the queue.
TRANSCRIPT = [
    start(max_active=1, max_waiting=1),
    acquire(1, 0),
    acquire(2, 1 * MS),
    acquire(3, 2 * MS),
    release(10 * MS),
    cancel(2, 20 * MS),
    stop(30 * MS),
]
GATE_ANSWERS = [
    {"ok": True},
    {"result": "admitted"},
    {"result": "queued", "deadline": 151 * MS},
    {"result": "queue_full"},
    {"ok": True, "promoted": 2},
    {"result": "handover_released", "promoted": None},
    {"ok": True},
]


class DriverCase(unittest.TestCase):
    """Helpers: a driver on a factory, its notes kept out of stderr."""

    def driver(self, factory, **kwargs):
        self.notes = io.StringIO()
        d = FifoDriver(factory, log=self.notes, **kwargs)
        self.addCleanup(d.close)
        return d

    def exchange(self, driver, requests):
        return [driver.handle(r) for r in requests]


class ExampleGateTest(DriverCase):
    def setUp(self):
        self.gate = load_factory(GATE + ":Gate")
        self.leaky = load_factory(LEAKY + ":Gate")

    def test_transcript(self):
        self.assertEqual(self.exchange(self.driver(self.gate), TRANSCRIPT), GATE_ANSWERS)

    def test_leaky_gate_keeps_the_handed_over_lease(self):
        answers = self.exchange(self.driver(self.leaky), TRANSCRIPT)
        self.assertEqual(answers[:5], GATE_ANSWERS[:5])
        self.assertEqual(answers[5], {"result": "removed", "promoted": None})
        self.assertIn("did not release", self.notes.getvalue())

    def test_leaky_gate_runs_a_slot_short_afterwards(self):
        d = self.driver(self.leaky)
        self.exchange(d, TRANSCRIPT[:6])
        # Nobody holds a lease, yet the gate's only slot is gone: 4 queues.
        self.assertEqual(d.handle(acquire(4, 21 * MS)), {"result": "queued", "deadline": 171 * MS})

    def test_expire_of_a_handed_over_waiter_passes_the_slot_on(self):
        d = self.driver(self.gate)
        answers = self.exchange(d, [
            start(max_waiting=2), acquire(1, 0), acquire(2, 1), acquire(3, 2), release(10),
            expire(2, 150 * MS + 1), claim(3, 150 * MS + 2), release(150 * MS + 3), release(150 * MS + 4),
        ])
        self.assertEqual(answers[1:], [
            {"result": "admitted"},
            {"result": "queued", "deadline": 150 * MS + 1},
            {"result": "queued", "deadline": 150 * MS + 2},
            {"ok": True, "promoted": 2},
            {"result": "handover_released", "promoted": 3},
            {"claimed": True},
            {"ok": True, "promoted": None},
            {"ok": False, "promoted": None},
        ])

    def test_claim_then_expire_of_a_plain_waiter(self):
        d = self.driver(self.gate)
        answers = self.exchange(d, [
            start(max_waiting=2), acquire(1, 0), acquire(2, 1), acquire(3, 2), release(10),
            claim(2, 11), claim(2, 12), claim(3, 13), expire(3, 150 * MS + 2), expire(3, 150 * MS + 3),
            cancel(2, 150 * MS + 4), release(150 * MS + 5), release(150 * MS + 6),
        ])
        self.assertEqual(answers[5:], [
            {"claimed": True},
            {"claimed": False},                           # claimed already
            {"claimed": False},                           # never handed over
            {"result": "removed", "promoted": None},      # wait_timeout
            {"result": "not_waiting", "promoted": None},  # gone already
            {"result": "not_waiting", "promoted": None},  # 2 holds its lease
            {"ok": True, "promoted": None},
            {"ok": False, "promoted": None},
        ])

    def test_cancel_of_a_plain_waiter(self):
        d = self.driver(self.gate)
        answers = self.exchange(d, [start(max_waiting=2), acquire(1, 0), acquire(2, 1), cancel(2, 5),
                                    acquire(3, 6), release(7), claim(3, 8)])
        self.assertEqual(answers[3:], [
            {"result": "removed", "promoted": None},
            {"result": "queued", "deadline": 150 * MS + 6},
            {"ok": True, "promoted": 3},
            {"claimed": True},
        ])

    def test_ticket_timers_fire_only_on_expire(self):
        d = self.driver(self.gate)
        answers = self.exchange(d, [start(), acquire(1, 0), acquire(2, 1),
                                    release(10_000 * MS), claim(2, 10_000 * MS)])
        # Long past 2's deadline, it still waits: admitsim never sent expire.
        self.assertEqual(answers[3:], [{"ok": True, "promoted": 2}, {"claimed": True}])

    def test_unbalanced_release(self):
        d = self.driver(self.gate)
        self.assertEqual(self.exchange(d, [start(), release(0), acquire(1, 1), release(2), release(3)])[1:],
                         [{"ok": False, "promoted": None}, {"result": "admitted"},
                          {"ok": True, "promoted": None}, {"ok": False, "promoted": None}])

    def test_deadlines_are_exact_integers(self):
        for wait_ns in (1, 7, 123_456_789, 999_999_999, 86_400 * 1_000_000_000):
            for now in (0, 3, 1_234_567_891_011, 7 * 86_400 * 1_000_000_000 + 13):
                d = self.driver(self.gate)
                answers = self.exchange(d, [start(wait_ns=wait_ns, now=now), acquire(1, now), acquire(2, now)])
                self.assertEqual(answers[2], {"result": "queued", "deadline": now + wait_ns}, (wait_ns, now))
                self.assertIs(type(answers[2]["deadline"]), int)

    def test_stop_is_quiet_and_a_new_run_starts_afresh(self):
        d = self.driver(self.gate)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.exchange(d, [start(max_waiting=2), acquire(1, 0), acquire(2, 1), acquire(3, 2), release(5)])
            self.assertEqual(d.handle(stop(6)), {"ok": True})
            self.assertEqual(self.exchange(d, [start(now=100), acquire(1, 100)]),
                             [{"ok": True}, {"result": "admitted"}])
        self.assertEqual(err.getvalue(), "")

    def test_lease_context_manager_on_a_real_loop(self):
        module_gate = self.gate(1, 1, 0.01)

        async def scenario():
            async with module_gate.lease():
                self.assertEqual(module_gate.active, 1)
                second = asyncio.create_task(module_gate.acquire())
                await asyncio.sleep(0)
                with self.assertRaises(Exception) as refused:
                    await module_gate.acquire()
                self.assertEqual(refused.exception.reason, "queue_full")
                with self.assertRaises(Exception) as timed_out:
                    await second
                self.assertEqual(timed_out.exception.reason, "wait_timeout")
            self.assertEqual(module_gate.active, 0)

        asyncio.run(scenario())


class ProtocolErrorTest(DriverCase):
    def setUp(self):
        self.d = self.driver(load_factory(GATE + ":Gate"))

    def assertError(self, answer, fragment):
        self.assertEqual(list(answer), ["error"], answer)
        self.assertIn(fragment, answer["error"])

    def test_requests_before_start(self):
        self.assertError(self.d.handle(acquire(1, 0)), "start first")
        self.assertError(self.d.handle(stop(0)), "start first")

    def test_malformed_requests(self):
        self.d.handle(start())
        self.assertError(self.d.handle({"type": "dance", "now": 0}), "unknown request type")
        self.assertError(self.d.handle({"now": 0}), "unknown request type")
        self.assertError(self.d.handle([1, 2]), "JSON object")
        self.assertError(self.d.handle({"type": "acquire", "now": 0}), "missing field 'ticket'")
        self.assertError(self.d.handle({"type": "acquire", "ticket": 1}), "missing field 'now'")
        self.assertError(self.d.handle({"type": "acquire", "ticket": True, "now": 0}), "integer")
        self.assertError(self.d.handle({"type": "claim", "ticket": 0, "now": 0}), ">= 1")
        self.assertError(self.d.handle(start() | {"protocol": 2}), "protocol 2")
        self.assertError(self.d.handle({"type": "start", "protocol": 1, "seed": 1, "now": 0}), "config")

    def test_duplicate_ticket_and_time_going_back(self):
        self.d.handle(start())
        self.assertEqual(self.d.handle(acquire(1, 50)), {"result": "admitted"})
        self.assertError(self.d.handle(acquire(1, 60)), "used before")
        self.assertError(self.d.handle(acquire(2, 40)), "before the previous")

    def test_gate_exceptions_become_errors(self):
        class Broken:
            def __init__(self, *args):
                pass

            async def acquire(self):
                raise ValueError("boom")

            def release(self):
                raise KeyError("nope")

        d = self.driver(Broken)
        self.assertEqual(d.handle(start()), {"ok": True})
        self.assertEqual(d.handle(acquire(3, 0)), {"error": "acquire(ticket 3) raised ValueError: boom"})
        self.assertEqual(d.handle(release(1)), {"error": "release() raised KeyError: 'nope'"})

    def test_factory_failures(self):
        def factory(*args):
            raise OSError("no gate today")

        self.assertEqual(self.driver(factory).handle(start()),
                         {"error": "start: the gate factory raised OSError: no gate today"})
        self.assertError(self.driver(lambda *a: object()).handle(start()), "no method acquire()")
        self.assertError(self.driver(load_factory(GATE + ":Gate"), acquire_name="enter").handle(start()),
                         "no method enter()")


class Refused(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class TimeoutGate:
    """Another shape of gate: asyncio.timeout, an async release behind a lock,
    custom method names, and it reads the clock, uuid4 and random."""

    made = []

    def __init__(self, max_active, max_waiting, wait_seconds):
        self.max_active, self.max_waiting, self.wait_seconds = max_active, max_waiting, wait_seconds
        self.active = 0
        self.queue = collections.deque()
        self.lock = asyncio.Lock()
        self.seen = []
        TimeoutGate.made.append(self)

    async def enter(self):
        self.seen.append((time.monotonic(), time.time(), time.monotonic_ns(), time.time_ns(),
                          str(uuid.uuid4()), random.random(), asyncio.get_running_loop().time()))
        if self.active < self.max_active and not self.queue:
            self.active += 1
            return
        if len(self.queue) >= self.max_waiting:
            raise Refused("queue_full")
        slot = asyncio.get_running_loop().create_future()
        self.queue.append(slot)
        try:
            async with asyncio.timeout(self.wait_seconds):
                await slot
        except (TimeoutError, asyncio.CancelledError) as exc:
            if not slot.done():
                self.queue.remove(slot)
            elif not slot.cancelled():
                await self.leave()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise Refused("wait_timeout") from None

    async def leave(self):
        async with self.lock:
            await asyncio.sleep(0)
            if self.active == 0:
                raise RuntimeError("unbalanced")
            self.active -= 1
            if self.queue:
                self.active += 1
                self.queue.popleft().set_result(None)


class OtherGateShapesTest(DriverCase):
    def test_asyncio_timeout_and_async_release(self):
        d = self.driver(TimeoutGate, acquire_name="enter", release_name="leave")
        wait = 123_456_789
        answers = self.exchange(d, [
            start(max_waiting=2, wait_ns=wait, now=5), acquire(1, 7), acquire(2, 8), acquire(3, 9),
            acquire(4, 9), release(10), expire(2, 8 + wait), cancel(3, 9 + wait), release(10 + wait),
        ])
        self.assertEqual(answers, [
            {"ok": True}, {"result": "admitted"},
            {"result": "queued", "deadline": 8 + wait}, {"result": "queued", "deadline": 9 + wait},
            {"result": "queue_full"}, {"ok": True, "promoted": 2},
            {"result": "handover_released", "promoted": 3},
            {"result": "handover_released", "promoted": None},
            {"ok": False, "promoted": None},
        ])

    def test_virtual_time_and_seeded_randomness(self):
        runs = []
        for _ in range(2):
            TimeoutGate.made.clear()
            d = self.driver(TimeoutGate, acquire_name="enter", release_name="leave")
            self.exchange(d, [start(seed=11, now=0), acquire(1, 2_500_000_000)])
            runs.append(TimeoutGate.made[0].seen)
        self.assertEqual(runs[0], runs[1])
        mono, wall, mono_ns, wall_ns, uid, _rand, loop_time = runs[0][0]
        self.assertEqual((mono, mono_ns, loop_time), (2.5, 2_500_000_000, 2.5))
        self.assertEqual((wall, wall_ns), (1_700_000_002.5, 1_700_000_002_500_000_000))
        self.assertEqual(uuid.UUID(uid).version, 4)
        # Outside of a request the real clocks are back.
        self.assertGreater(time.time(), 1_700_000_100)

    def test_background_timers_fire_as_time_advances(self):
        class Ticking:
            def __init__(self, *args):
                self.ticks = []
                self.active = 0
                self.sweeper = asyncio.get_running_loop().create_task(self.sweep())

            async def sweep(self):
                while True:
                    await asyncio.sleep(0.05)
                    self.ticks.append(time.monotonic_ns())

            async def acquire(self):
                self.active += 1

            def release(self):
                self.active -= 1

        gates = []
        d = self.driver(lambda *a: gates.append(Ticking(*a)) or gates[-1])
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.exchange(d, [start(), acquire(1, 20 * MS), release(175 * MS)])
            self.assertEqual(gates[0].ticks, [50 * MS, 100 * MS, 150 * MS])
            self.assertEqual(d.handle(stop(200 * MS)), {"ok": True})
        self.assertTrue(gates[0].sweeper.cancelled())
        self.assertEqual(err.getvalue(), "")

    def test_a_timer_that_hands_over_is_an_error(self):
        class LazyPromoter:
            """Promotes from a background task instead of from release()."""

            def __init__(self, *args):
                self.active, self.queue = 0, collections.deque()

            async def acquire(self):
                if self.active == 0:
                    self.active = 1
                    return
                slot = asyncio.get_running_loop().create_future()
                self.queue.append(slot)
                await slot

            def release(self):
                asyncio.get_running_loop().create_task(self._later())

            async def _later(self):
                await asyncio.sleep(0.01)
                self.queue.popleft().set_result(None)

        d = self.driver(LazyPromoter)
        answers = self.exchange(d, [start(), acquire(1, 0), acquire(2, 0), release(1), claim(2, 20 * MS)])
        self.assertEqual(answers[2:4], [{"result": "queued", "deadline": None}, {"ok": True, "promoted": None}])
        self.assertIn("ticket 2 was handed over by a timer", answers[4]["error"])

    def test_sync_acquire(self):
        class SyncGate:
            def __init__(self, *args):
                pass

            def acquire(self):
                return None

            def release(self):
                raise RuntimeError("none out")

        d = self.driver(SyncGate)
        self.assertEqual(self.exchange(d, [start(), acquire(1, 0), release(1)]),
                         [{"ok": True}, {"result": "admitted"}, {"ok": False, "promoted": None}])

    def test_unretrieved_task_exceptions_stay_quiet(self):
        class Sloppy:
            def __init__(self, *args):
                pass

            async def acquire(self):
                async def fail():
                    raise ValueError("nobody looks at me")
                asyncio.get_running_loop().create_task(fail())
                asyncio.get_running_loop().call_soon(lambda: 1 / 0)

            def release(self):
                pass

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            d = self.driver(Sloppy)
            self.assertEqual(self.exchange(d, [start(), acquire(1, 0)]), [{"ok": True}, {"result": "admitted"}])
            d.close()
        self.assertEqual(err.getvalue(), "")

    def test_futures_made_without_create_future(self):
        """A waiter future made as asyncio.Future(): only the task's own wakeup
        is held; claim still works. On 3.11 a leave after the handover then
        finds shield's outer future done and wait_for returns normally."""

        class PlainFutureGate:
            def __init__(self, max_active, max_waiting, wait_seconds):
                self.active, self.queue, self.wait = 0, collections.deque(), wait_seconds

            async def acquire(self):
                if self.active < 1 and not self.queue:
                    self.active += 1
                    return
                slot = asyncio.Future()
                self.queue.append(slot)
                try:
                    await asyncio.wait_for(asyncio.shield(slot), self.wait)
                except (TimeoutError, asyncio.CancelledError):
                    if not slot.done():
                        self.queue.remove(slot)
                    elif not slot.cancelled():
                        self.release()
                    raise

            def release(self):
                self.active -= 1
                if self.queue:
                    self.active += 1
                    self.queue.popleft().set_result(None)

        d = self.driver(PlainFutureGate)
        answers = self.exchange(d, [start(max_waiting=2), acquire(1, 0), acquire(2, 1), acquire(3, 2),
                                    release(3), claim(2, 4), release(5), cancel(3, 6)])
        self.assertEqual(answers[4:6], [{"ok": True, "promoted": 2}, {"claimed": True}])
        self.assertEqual(answers[6], {"ok": True, "promoted": 3})
        if sys.version_info < (3, 12):
            self.assertEqual(answers[7], {"result": "not_waiting", "promoted": None})


class SubprocessTest(unittest.TestCase):
    def run_child(self, args, lines, cwd=EXAMPLES):
        data = "".join(line + "\n" for line in lines).encode()
        return subprocess.run([sys.executable, ENTRY, *args], input=data, capture_output=True,
                              cwd=cwd, timeout=30)

    def test_transcript_over_pipes(self):
        lines = [json.dumps(r, separators=(",", ":")) for r in TRANSCRIPT]
        expected = b"".join(json.dumps(a, separators=(",", ":")).encode() + b"\n" for a in GATE_ANSWERS)
        first = self.run_child(["gate.py:Gate"], lines)
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual(first.stdout, expected)
        self.assertEqual(first.stderr, b"")
        # Same requests in, same bytes out.
        self.assertEqual(self.run_child(["gate.py:Gate"], lines).stdout, expected)

    def test_each_run_imports_the_gate_anew(self):
        # A gate whose module keeps state across instances (a run counter that widens the gate
        # from the second instance on): a child reused for a second run must answer as a fresh
        # one, so that a seed's answers never depend on the runs the child served before.
        with tempfile.TemporaryDirectory() as d:
            # The counter lives in a module imported by name (the gate's own file is executed
            # afresh by every import by path anyway).
            with open(os.path.join(d, "run_counter.py"), "w") as f:
                f.write("RUNS = [0]\n")
            with open(os.path.join(d, "stateful.py"), "w") as f:
                f.write("import gate, run_counter\n"
                        "def Gate(max_active, max_waiting, wait_seconds):\n"
                        "    run_counter.RUNS[0] += 1\n"
                        "    return gate.Gate(max_active * run_counter.RUNS[0], max_waiting, wait_seconds)\n")
            start = {"type": "start", "protocol": 1, "gate": "g", "seed": 1,
                     "config": {"max_active": 1, "max_waiting": 1, "wait_deadline_ns": 10**9}, "now": 0}
            one_run = [start, {"type": "acquire", "ticket": 1, "now": 0},
                       {"type": "acquire", "ticket": 2, "now": 0}, {"type": "stop", "now": 0}]
            lines = [json.dumps(r, separators=(",", ":")) for r in one_run + one_run]
            env_path = os.pathsep.join([d, EXAMPLES, os.environ.get("PYTHONPATH", "")])
            out = subprocess.run([sys.executable, ENTRY, os.path.join(d, "stateful.py") + ":Gate"],
                                 input="".join(l + "\n" for l in lines).encode(), capture_output=True,
                                 cwd=d, timeout=30, env=dict(os.environ, PYTHONPATH=env_path))
            self.assertEqual(out.returncode, 0, out.stderr)
            answers = out.stdout.decode().splitlines()
            self.assertEqual(len(answers), 8)
            self.assertEqual(answers[2], '{"result":"queued","deadline":1000000000}')
            self.assertEqual(answers[:4], answers[4:])

    def test_interactive_exchange_and_leaky_gate(self):
        child = subprocess.Popen([sys.executable, ENTRY, "leaky_gate.py:Gate"], cwd=EXAMPLES,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            got = []
            for request in TRANSCRIPT:
                child.stdin.write(json.dumps(request).encode() + b"\n")
                child.stdin.flush()
                got.append(json.loads(child.stdout.readline()))
            child.stdin.close()
            self.assertEqual(child.wait(timeout=30), 0)
        finally:
            if child.poll() is None:
                child.kill()
            child.stdout.close()
            child.stderr.close()
        self.assertEqual(got[:5], GATE_ANSWERS[:5])
        self.assertEqual(got[5], {"result": "removed", "promoted": None})

    def test_user_output_goes_to_stderr_and_bad_lines_get_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "chatty.py"), "w") as f:
                f.write(textwrap.dedent("""\
                    import os, sys
                    print("hello from import")
                    class Chatty:
                        def __init__(self, *args):
                            print("made", args)
                        async def acquire(self):
                            print("acquire")
                            os.write(1, b"raw fd 1\\n")
                        def release(self):
                            sys.stdout.write("release\\n")
                    """))
            result = self.run_child(["chatty.py:Chatty"], [
                json.dumps(start()), "not json", "", json.dumps(acquire(1, 0)), json.dumps(release(1)),
            ], cwd=tmp)
        self.assertEqual(result.returncode, 0, result.stderr)
        answers = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual(answers[0], {"ok": True})
        self.assertIn("not JSON", answers[1]["error"])
        self.assertIn("not JSON", answers[2]["error"])
        self.assertEqual(answers[3:], [{"result": "admitted"}, {"ok": True, "promoted": None}])
        for text in (b"hello from import", b"made (1, 1, 0.15)", b"acquire", b"raw fd 1", b"release"):
            self.assertIn(text, result.stderr)

    def test_usage(self):
        helped = self.run_child(["--help"], [])
        self.assertEqual(helped.returncode, 0)
        self.assertIn(b"FILE.py:FACTORY", helped.stdout)
        for args, fragment in ([[], b"usage"], [["gate.py"], b"FILE.py:FACTORY"],
                               [["missing.py:Gate"], b"no such file"], [["gate.py:Nope"], b"Nope"],
                               [["--acquire", "1x", "gate.py:Gate"], b"method name"]):
            result = self.run_child(args, [])
            self.assertEqual(result.returncode, 2, args)
            self.assertIn(fragment, result.stderr, args)
            self.assertEqual(result.stdout, b"", args)


if __name__ == "__main__":
    unittest.main()
