#!/usr/bin/env python3
"""Run an asyncio lease client as one admitsim fleet worker's child process, on virtual time.

    python3 admitsim_lease.py [--hold NAME | --acquire NAME --release NAME] FILE.py:FACTORY

FILE.py (relative to the working directory) is imported by path;
FACTORY(redis, settings) makes the client, with hold() (an async context
manager, yielding once the permit is held) or acquire()/release(). The
process then answers admitsim's requests (docs/process-gate.md, "A fleet's
client", protocol version 1) on stdin/stdout until stdin closes. ``import
redis.asyncio`` in FILE.py finds the adapter's client (admitsim_process.redis_shim).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from admitsim_process.serve import lease_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(lease_main())
