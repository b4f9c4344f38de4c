"""The baseline of the process client's speed figure (docs/performance.md): an asyncio
lease client driven the way a Python team would test it without admitsim, by a
plain in-process harness on a virtual-time event loop against an in-memory fake
Redis.

    python3 bench/python_lease_harness.py [--requests N] [--workers W] [--client FILE.py:FACTORY]

The traffic is examples/python_lease/fleet.json's, scaled as the figure's
scenario scales it: W workers (8) share 4 permits of 15 s leases; an item
arrives every second and takes 2 s to 6 s (uniform); each worker takes the
next item from one queue, holds a permit for it (the client's ``hold()``),
works, and gives the permit back. Every Redis call costs 1 ms of virtual time
(admitsim's default link latency each way is 0.5 ms). The fake Redis keeps the
sorted set in a dict and runs the client's acquire script as Python written to
match it (a team mocking its script), EVALSHA answering NOSCRIPT until a
SCRIPT LOAD, as Redis does. The client is the unmodified example, through the
adapter's Redis-shaped client. It prints the CPU time per request
(``time.process_time``), which admitsim's process client is compared against
(admitsim and its children together, same traffic).
"""

import argparse
import hashlib
import heapq
import importlib.util
import os
import random
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gate", "process", "python"))

import asyncio  # noqa: E402

from admitsim_process import redis_shim  # noqa: E402
from admitsim_process.vloop import VirtualClock, VirtualLoop, virtual_process  # noqa: E402

redis_shim.install()


class FakeRedis:
    """The commands the example client sends, on one in-memory sorted set per key."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.sets: dict[bytes, dict[bytes, float]] = {}
        self.scripts: set[str] = set()

    def take_permit(self, key: bytes, now_ms: int, lease_ms: int, limit: int, token: bytes) -> int:
        members = self.sets.setdefault(key, {})
        for m in [m for m, s in members.items() if s <= now_ms - lease_ms]:
            del members[m]
        if len(members) >= limit:
            return 0
        members[token] = float(now_ms)
        return 1

    async def send(self, words: list[bytes]) -> object:
        await asyncio.sleep(0.001)
        cmd = words[0].upper()
        if cmd == b"EVALSHA":
            if words[1].decode() not in self.scripts:
                raise redis_shim.NoScriptError("NOSCRIPT No matching script. Please use EVAL.")
            key, now_ms, lease_ms, limit, token = words[3], int(words[4]), int(words[5]), int(words[6]), words[7]
            return self.take_permit(key, now_ms, lease_ms, limit, token)
        if cmd == b"SCRIPT" and words[1].upper() == b"LOAD":
            sha = hashlib.sha1(words[2]).hexdigest()
            self.scripts.add(sha)
            return sha.encode()
        if cmd == b"ZREM":
            members = self.sets.get(words[1], {})
            return sum(1 for m in words[2:] if members.pop(m, None) is not None)
        raise redis_shim.ResponseError(f"ERR unknown command {cmd!r} in the harness")


def load(spec):
    path, _, factory = spec.rpartition(":")
    mod_spec = importlib.util.spec_from_file_location("bench_client", path)
    mod = importlib.util.module_from_spec(mod_spec)
    sys.modules["bench_client"] = mod
    mod_spec.loader.exec_module(mod)
    return getattr(mod, factory)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--client", default=os.path.join(HERE, "..", "examples", "python_lease", "client.py") + ":make_gate")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)

    start = time.process_time()
    factory = load(args.client)
    rng = random.Random(args.seed)
    clock = VirtualClock()
    loop = VirtualLoop(clock)
    asyncio.set_event_loop(loop)
    server = FakeRedis(clock)
    settings = types.SimpleNamespace(key="admitsim:inflight", limit=4, lease_ms=15_000, acquire_timeout_s=30.0,
                                     backoff=types.SimpleNamespace(kind="fixed", delay_s=0.2))
    outcomes = {"completed": 0, "gave_up": 0}
    queue: asyncio.Queue = asyncio.Queue()

    async def worker():
        client = redis_shim.Redis(sender=server.send)
        gate = factory(client, settings)
        while True:
            service_s = await queue.get()
            if service_s is None:
                return
            try:
                async with gate.hold():
                    await asyncio.sleep(service_s)
                outcomes["completed"] += 1
            except TimeoutError:
                outcomes["gave_up"] += 1

    async def arrivals():
        for i in range(args.requests):
            await asyncio.sleep(1.0 if i else 0.0)
            queue.put_nowait(2.0 + 4.0 * rng.random())
        for _ in range(args.workers):
            queue.put_nowait(None)

    with virtual_process(clock):
        with loop.running():
            for _ in range(args.workers):
                loop.create_task(worker())
            loop.create_task(arrivals())
        while True:
            loop.run_until_quiet()
            heap = loop._timers  # (deadline_ns, arming order, handle), a heap
            while heap and heap[0][2].cancelled():
                heapq.heappop(heap)
            if not heap:
                break
            loop.advance_to(heap[0][0])
    cpu = time.process_time() - start
    print("requests %d completed %d gave up %d cpu %.3f s: %.1f us per request"
          % (args.requests, outcomes["completed"], outcomes["gave_up"], cpu, cpu / args.requests * 1e6))


if __name__ == "__main__":
    main(sys.argv[1:])
