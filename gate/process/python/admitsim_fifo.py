#!/usr/bin/env python3
"""Run an asyncio FIFO gate as admitsim's child process, on virtual time.

    python3 admitsim_fifo.py [--acquire NAME] [--release NAME] FILE.py:FACTORY

FILE.py (relative to the working directory) is imported by path;
FACTORY(max_active, max_waiting, wait_seconds) makes a gate with
``async acquire()`` and ``release()``. The process then answers admitsim's
requests (docs/process-gate.md, protocol version 1) on stdin/stdout until
stdin closes. See the admitsim_process package next to this file.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from admitsim_process.serve import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
