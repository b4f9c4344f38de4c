"""admitsim's Python process-gate adapter (standard library only, Python 3.11+).

It runs an unmodified asyncio FIFO gate as admitsim's child process
(docs/process-gate.md, protocol version 1), on virtual time:

* ``vloop``: ``VirtualLoop``, an asyncio event loop whose clock is admitsim's
  virtual clock and which the driver steps by hand (run until quiet at an
  instant; advance time), with timers and callbacks attributed to tickets so
  that a ticket's deadline fires only on ``expire`` and a promoted waiter's
  wakeup is held until ``claim``; ``virtual_process``, which points
  ``time.monotonic``/``time.time`` (and friends) and ``uuid.uuid4`` at it;
* ``fifo_driver``: ``FifoDriver``, which maps each request (start, acquire,
  release, claim, expire, cancel, stop) onto the gate and its tasks and
  builds the answer;
* ``lease_driver``: ``LeaseDriver``, which runs one fleet worker's lease
  client (its ``hold()``, or ``acquire()``/``release()``) as admitsim's
  operations, each answered with its next step (a Redis command, a wait, the
  end), for ``admitsim_lease.py``;
* ``redis_shim``: the client shaped like ``redis.asyncio.Redis`` whose calls
  become those commands;
* ``driver_base``: what both drivers share;
* ``serve``: the line protocol on stdin/stdout and the command lines of
  ``admitsim_fifo.py`` and ``admitsim_lease.py``.
"""

from .driver_base import ProtocolError, SteppedDriver
from .fifo_driver import PROTOCOL_VERSION, FifoDriver, refusal_reason
from .lease_driver import LeaseDriver
from .serve import encode_answer, lease_main, load_factory, main, serve
from .vloop import EPOCH_S, LoopRunaway, VirtualClock, VirtualLoop, virtual_process

__all__ = [
    "EPOCH_S",
    "FifoDriver",
    "LeaseDriver",
    "LoopRunaway",
    "PROTOCOL_VERSION",
    "ProtocolError",
    "VirtualClock",
    "VirtualLoop",
    "SteppedDriver",
    "encode_answer",
    "lease_main",
    "load_factory",
    "main",
    "refusal_reason",
    "serve",
    "virtual_process",
]
