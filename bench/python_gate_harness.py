"""The baseline of the process gate's speed figure (docs/performance.md): an asyncio
FIFO gate driven the way a Python team would test it without admitsim, by a
plain in-process harness on a virtual-time event loop.

    python3 bench/python_gate_harness.py [--requests N] [--gate FILE.py:FACTORY]

It runs fifo_poisson's traffic (Poisson arrivals, mean gap 100 ms; exponential
service, mean 700 ms; a gate of 8 with a queue of 32 and a 5 s wait) against
the gate: each request is a task that sleeps until its arrival, takes a lease
(``async with``-style: acquire, then release in a ``finally``) and sleeps its
service time. The loop is the adapter's own virtual-time loop, stepped from one
timer to the next: no IPC, no admitsim. It prints the CPU time per request
(``time.process_time``), which admitsim's process gate is compared against
(admitsim and the child together, same traffic).
"""

import argparse
import heapq
import importlib.util
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gate", "process", "python"))

import asyncio  # noqa: E402

from admitsim_process.vloop import VirtualClock, VirtualLoop  # noqa: E402


def load_gate(spec):
    path, _, factory = spec.rpartition(":")
    mod_spec = importlib.util.spec_from_file_location("bench_gate", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return getattr(mod, factory)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--gate", default=os.path.join(HERE, "..", "examples", "python_gate", "gate.py") + ":Gate")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    factory = load_gate(args.gate)
    rng = random.Random(args.seed)
    clock = VirtualClock()
    loop = VirtualLoop(clock)
    asyncio.set_event_loop(loop)
    gate = factory(8, 32, 5.0)
    outcomes = {"completed": 0, "refused": 0}

    async def request(at_s, service_s):
        await asyncio.sleep(at_s)
        try:
            await gate.acquire()
        except Exception:
            outcomes["refused"] += 1
            return
        try:
            await asyncio.sleep(service_s)
        finally:
            gate.release()
        outcomes["completed"] += 1

    start = time.process_time()
    at = 0.0
    for _ in range(args.requests):
        at += rng.expovariate(1 / 0.1)
        loop.create_task(request(at, rng.expovariate(1 / 0.7)))
    while True:
        loop.run_until_quiet()
        heap = loop._timers  # (deadline_ns, arming order, handle), a heap
        while heap and heap[0][2].cancelled():
            heapq.heappop(heap)
        if not heap:
            break
        loop.advance_to(heap[0][0])
    cpu = time.process_time() - start
    print("requests %d completed %d refused %d cpu %.3f s: %.1f us per request"
          % (args.requests, outcomes["completed"], outcomes["refused"], cpu, cpu / args.requests * 1e6))


if __name__ == "__main__":
    main(sys.argv[1:])
