"""Tests of the Python adapter's fast paths (gate/process/python): each must
give exactly what the plain way gives.

Run from the repository root:

    python3 -m unittest discover -s tests/python -v

* ``encode_answer`` writes the bytes of ``json.dumps(answer, separators=(",", ":"))``;
* ``decode_request`` reads a line as ``json.loads`` does, and refuses what it refuses
  with the same message;
* ``serve`` (the driver ``serving()``: its clock and its run's loop kept in
  place between requests) answers as ``FifoDriver.handle`` does request by
  request, and leaves the thread and the process as it found them;
* a driver forgets the tasks of tickets whose acquire() ended.
"""

import asyncio
import collections
import enum
import io
import json
import os
import sys
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADAPTER_DIR = os.path.join(ROOT, "gate", "process", "python")
sys.path.insert(0, ADAPTER_DIR)

from admitsim_process import FifoDriver, load_factory, serve  # noqa: E402
from admitsim_process.serve import decode_request, encode_answer  # noqa: E402

GATE = os.path.join(ROOT, "examples", "python_gate", "gate.py")
LEAKY = os.path.join(ROOT, "examples", "python_gate", "leaky_gate.py")
from protocol_requests import MS, acquire, cancel, claim, expire, release, start, stop  # noqa: E402


# Every kind of answer: admitted, queued, queue_full, promotions, claims,
# handover_released, removed, not_waiting, unbalanced releases, protocol
# errors, and a second run after stop.
TRANSCRIPT = [
    release(0), start(max_waiting=2), acquire(1, 0), acquire(2, 1), acquire(3, 2), acquire(4, 3),
    release(10), claim(2, 10), claim(2, 11), claim(3, 12), release(20), cancel(3, 21),
    acquire(5, 22), acquire(6, 23), acquire(7, 23), release(24), expire(7, 150 * MS + 23), claim(6, 150 * MS + 23),
    expire(6, 150 * MS + 30), cancel(7, 150 * MS + 31), acquire(6, 150 * MS + 32),
    acquire(8, 5), {"type": "dance", "now": 200 * MS}, {"now": 200 * MS}, [1, 2],
    {"type": "claim", "ticket": 0, "now": 200 * MS}, {"type": "acquire", "ticket": True, "now": 200 * MS},
    release(200 * MS), release(201 * MS), release(202 * MS), stop(203 * MS), acquire(9, 204 * MS),
    start(max_active=2, max_waiting=2, now=300 * MS), acquire(1, 300 * MS), acquire(2, 300 * MS), acquire(3, 301 * MS),
    release(302 * MS), claim(3, 302 * MS), stop(303 * MS),
]


class EncodeAnswerTest(unittest.TestCase):
    def assertSameBytes(self, answer):
        expected = (json.dumps(answer, separators=(",", ":")) + "\n").encode("utf-8")
        self.assertEqual(encode_answer(answer), expected, answer)

    def test_the_answers_the_driver_gives(self):
        for answer in ({"ok": True}, {"ok": True, "promoted": None}, {"ok": True, "promoted": 17},
                       {"ok": False, "promoted": None}, {"result": "admitted"}, {"result": "queue_full"},
                       {"result": "queued", "deadline": 151_000_000}, {"result": "queued", "deadline": None},
                       {"claimed": True}, {"claimed": False}, {"result": "removed", "promoted": None},
                       {"result": "not_waiting", "promoted": None},
                       {"result": "handover_released", "promoted": 4},
                       {"error": "acquire(ticket 3) raised ValueError: boom"}):
            self.assertSameBytes(answer)

    def test_values_json_writes_otherwise(self):
        class Level(enum.IntEnum):
            HIGH = 3

        for answer in ({}, {"ok": 1}, {"ok": 0}, {"n": -5}, {"n": 10**40}, {"n": Level.HIGH}, {"x": 1.5},
                       {"x": float("inf")}, {"x": [1, 2]}, {"x": {"y": None}}, {"result": ""},
                       {"result": "9lives"}, {"result": "with space"}, {"result": "é"}, {"result": "αβ"},
                       {"error": 'quote " backslash \\ newline \n tab \t nul \0 \u2028 \U0001f600'},
                       {1: True}, {None: 1}, {"ké": 1}, {"a-b": 1}, {"deadline": True, "promoted": False}):
            self.assertSameBytes(answer)


class DecodeRequestTest(unittest.TestCase):
    def assertDecodesAsJson(self, line):
        try:
            expected = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            with self.assertRaises(ValueError) as refused:
                decode_request(line)
            self.assertEqual(str(refused.exception), f"a request line is not JSON: {exc}", line)
            return
        got = decode_request(line)
        self.assertEqual(got, expected, line)
        self.assertEqual(type(got), type(expected), line)
        if isinstance(expected, dict):
            self.assertEqual(list(got), list(expected), line)
            self.assertEqual([type(v) for v in got.values()], [type(v) for v in expected.values()], line)

    def test_the_requests_admitsim_writes(self):
        for kind in ("acquire", "claim", "expire", "cancel"):
            for ticket, now in ((1, 0), (12, 1159416632), (10**29, 10**29 + 1), (10**30, 10**31)):
                self.assertDecodesAsJson(
                    f'{{"type":"{kind}","ticket":{ticket},"now":{now}}}'.encode())
        for kind in ("release", "stop"):
            for now in (0, 7, 1001656798221, 10**35):
                self.assertDecodesAsJson(f'{{"type":"{kind}","now":{now}}}'.encode())
        self.assertDecodesAsJson(json.dumps(start(max_waiting=2), separators=(",", ":")).encode())

    def test_other_lines(self):
        for line in (b'{"type":"acquire","ticket":01,"now":5}', b'{"type":"acquire","ticket":-1,"now":5}',
                     b'{"type":"acquire","ticket":1,"now":-0}', b'{"type":"acquire","ticket":1,"now":1.0}',
                     b'{"type":"acquire","ticket":1,"now":1e3}', b'{"type":"acquire","ticket":1,"now":5} ',
                     b' {"type":"release","now":5}', b'{"type": "release", "now": 5}',
                     b'{"now":5,"type":"release"}', b'{"type":"release","now":5,"extra":1}',
                     b'{"type":"claim","now":5}', b'{"type":"stop","ticket":3,"now":5}',
                     b'{"type":"start","now":0}', b'{"type":"dance","now":0}', b'{"type":"release","now":5}x',
                     b'{"type":"release","now":5}\r', b'{"type":"release","now":"5"}',
                     '{"type":"release","now":\u0665}'.encode(), b'\xef\xbb\xbf{"type":"release","now":5}',
                     b'{"type":"release","now":5', b'\xff', b'', b'null', b'[1,2]', b'"release"', b'not json'):
            self.assertDecodesAsJson(line)


class ServingTest(unittest.TestCase):
    def one_by_one(self, factory, requests):
        driver = FifoDriver(factory, log=io.StringIO())
        try:
            return [driver.handle(r) for r in requests]
        finally:
            driver.close()

    def served(self, factory, lines):
        driver = FifoDriver(factory, log=io.StringIO())
        out = io.BytesIO()
        serve(driver, io.BytesIO(b"".join(line + b"\n" for line in lines)), out)
        return out.getvalue().splitlines()

    def test_serve_answers_as_handle_does(self):
        for path in (GATE, LEAKY):
            factory = load_factory(path + ":Gate")
            lines = [json.dumps(r, separators=(",", ":")).encode() for r in TRANSCRIPT]
            got = [json.loads(line) for line in self.served(factory, lines)]
            self.assertEqual(got, self.one_by_one(factory, TRANSCRIPT), path)

    def test_the_answers_cover_every_kind(self):
        answers = self.one_by_one(load_factory(GATE + ":Gate"), TRANSCRIPT)
        for answer in ({"ok": False, "promoted": None}, {"result": "admitted"},
                       {"result": "queued", "deadline": 150 * MS + 1}, {"result": "queue_full"},
                       {"ok": True, "promoted": None},
                       {"ok": True, "promoted": 2}, {"claimed": True}, {"claimed": False},
                       {"result": "handover_released", "promoted": None}, {"result": "removed", "promoted": None},
                       {"result": "not_waiting", "promoted": None}, {"ok": True}):
            self.assertIn(answer, answers)
        self.assertEqual(sum("error" in a for a in answers), 9, answers)

    def test_the_thread_and_the_process_are_left_as_found(self):
        monotonic, perf_counter = time.monotonic, time.perf_counter
        factory = load_factory(GATE + ":Gate")
        lines = [json.dumps(r, separators=(",", ":")).encode() for r in TRANSCRIPT[1:7]]
        self.served(factory, lines)   # ends with the run still open: serve closes it
        self.assertIsNone(asyncio._get_running_loop())
        self.assertIs(time.monotonic, monotonic)
        self.assertIs(time.perf_counter, perf_counter)
        self.assertEqual(sys.get_asyncgen_hooks(), (None, None))

        driver = FifoDriver(factory)
        self.addCleanup(driver.close)
        for request in TRANSCRIPT[1:7]:
            driver.handle(request)
            self.assertIsNone(asyncio._get_running_loop())
            self.assertIs(time.monotonic, monotonic)

    def test_serving_keeps_the_run_loop_running_between_requests(self):
        driver = FifoDriver(load_factory(GATE + ":Gate"))
        self.addCleanup(driver.close)
        with driver.serving():
            driver.handle(start(max_waiting=2, now=5 * MS))
            self.assertIs(asyncio._get_running_loop(), driver.run.loop)
            self.assertEqual(time.monotonic_ns(), 5 * MS)
            self.assertEqual(driver.handle(acquire(1, 6 * MS)), {"result": "admitted"})
            self.assertIs(asyncio._get_running_loop(), driver.run.loop)
            self.assertEqual(driver.handle(stop(7 * MS)), {"ok": True})
            self.assertIsNone(asyncio._get_running_loop())
            self.assertEqual(driver.handle(start(max_waiting=2, now=8 * MS)), {"ok": True})
            second = driver.run.loop
            self.assertIs(asyncio._get_running_loop(), second)
            with self.assertRaises(RuntimeError):
                with driver.serving():
                    pass
        self.assertIsNone(asyncio._get_running_loop())
        self.assertFalse(second.is_closed())   # serving() ended; the run is still open
        driver.close()
        self.assertTrue(second.is_closed())


class PruneTest(unittest.TestCase):
    def test_only_live_tickets_are_kept(self):
        driver = FifoDriver(load_factory(GATE + ":Gate"))
        self.addCleanup(driver.close)
        driver.handle(start(max_waiting=2))
        driver.handle(acquire(1, 0))
        self.assertEqual(set(driver.run.tasks), set())         # admitted: done
        driver.handle(acquire(2, 1))
        driver.handle(acquire(3, 2))
        self.assertEqual(set(driver.run.tasks), {2, 3})        # both wait
        driver.handle(release(3))
        self.assertEqual(set(driver.run.tasks), {2, 3})        # 2 handed over, unclaimed
        driver.handle(claim(2, 4))
        self.assertEqual(set(driver.run.tasks), {3})
        driver.handle(cancel(3, 5))
        self.assertEqual(set(driver.run.tasks), set())
        self.assertEqual(driver.run.loop.ended, [])


if __name__ == "__main__":
    unittest.main()


class LeaseFastPathTest(unittest.TestCase):
    """The lease client's messages: the same fast paths, the same guarantee."""

    def test_command_answers(self):
        answers = [
            {"command": ["EVALSHA", "90bd", "1", "admitsim:inflight", "1709251200249", "15000", "4", "w3-7"]},
            {"command": ["ZREM", "k", "w0-1"], "timeout_at": 1000000000},
            {"command": ["SET", "k", "a\"b"]},                 # a quote: escaped
            {"command": ["SET", "k", "a\\b"]},                 # a backslash: escaped
            {"command": ["SET", "k", "line\nbreak"]},          # a control character
            {"command": ["SET", "k", "é"]},                    # not ASCII
            {"command": ["SET", "k", {"hex": "ff"}]},          # bytes
            {"command": ["SCRIPT", "LOAD", "\nlocal x = 1\n"]},
            {"command": []},
            {"command": ["GET", "k"], "timeout_at": None},
            {"command": ["GET", "k"], "timeout_at": 1.5},
            {"command": ["GET", "k"], "extra": 1},
            {"command": "GET"},
            {"wait_until": 206000000, "then": {"command": ["EVALSHA", "90bd", "1", "k", "1709251200206"]}},
            {"wait_until": 5, "then": {"done": "acquire_timeout"}},
            {"wait_until": 5, "then": {"wait_until": 7}},
            {"wait_until": 5, "then": {"error": "a \"quoted\" failure"}},
            {"then": {"done": "granted"}, "wait_until": 5},                  # key order: json
            {"wait_until": 5.5, "then": {"done": "granted"}},
        ]
        for a in answers:
            with self.subTest(a=a):
                self.assertEqual(encode_answer(a), (json.dumps(a, separators=(",", ":")) + "\n").encode())

    def test_lease_requests(self):
        lines = [
            b'{"type":"woke","op":3,"now":456000000,"wall_ms":1709251200456}',
            b'{"type":"lost","op":12,"now":0,"wall_ms":-5}',
            b'{"type":"reply","op":1,"now":256000000,"wall_ms":1709251200256,"reply":{"int":0}}',
            b'{"type":"reply","op":1,"now":256000000,"wall_ms":1709251200256,"reply":{"int":-42}}',
            b'{"type":"reply","op":1,"now":254000000,"wall_ms":1709251200254,"reply":{"bulk":"90bdc6dd"}}',
            b'{"type":"reply","op":1,"now":2,"wall_ms":3,"reply":{"bulk":""}}',
            b'{"type":"reply","op":1,"now":2,"wall_ms":3,"reply":{"bulk":"a\\"b"}}',     # escaped: json
            b'{"type":"reply","op":1,"now":2,"wall_ms":3,"reply":{"bulk":"\\u00e9"}}',   # escaped: json
            b'{"type":"reply","op":1,"now":2,"wall_ms":3,"reply":{"nil":true}}',
            b'{"type":"reply","op":1,"now":2,"wall_ms":3,"reply":{"array":[{"int":1}]}}',
            b'{"type":"reply","op":1,"now":2,"wall_ms":3}',                             # no reply: json
            b'{"type":"woke","op":1,"now":2,"wall_ms":3,"reply":{"int":1}}',            # a reply on a wake: json
            b'{"type":"woke","op":01,"now":2,"wall_ms":3}',                             # not JSON
            b'{"type":"acquire","op":1,"token":"w0-1","now":0,"wall_ms":1709251200000}',
            b'{"type":"woke","op":3,"now":5,"wall_ms":6,"ahead":{"until":7513120836854775807,"wall_base":1709251200000000000}}',
            b'{"type":"woke","op":3,"now":5,"wall_ms":6,"ahead":{"wall_base":1709251200000000000}}',
            b'{"type":"reply","op":1,"now":2,"wall_ms":3,"reply":{"int":0},"ahead":{"until":0,"wall_base":0}}',
            b'{"type":"lost","op":1,"now":2,"wall_ms":3,"ahead":{"until":7,"wall_base":1}}',
            b'{"type":"woke","op":3,"now":5,"wall_ms":6,"ahead":{"wall_base":1,"until":7}}',   # key order: json
            b'{"type":"woke","op":3,"now":5,"wall_ms":6,"ahead":{"until":-1,"wall_base":1}}',  # negative: json
            b'{"type":"acquire","op":1,"token":"w0-1","now":0,"wall_ms":1,"ahead":{"until":2,"wall_base":3}}',
        ]
        for line in lines:
            with self.subTest(line=line):
                try:
                    expected = json.loads(line.decode())
                except ValueError:
                    with self.assertRaises(ValueError):
                        decode_request(line)
                    continue
                self.assertEqual(decode_request(line), expected)
