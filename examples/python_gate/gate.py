"""An asyncio FIFO admission gate: the kind admitsim's Python adapter runs as is.

At most ``max_active`` callers hold a lease at once. A caller that finds a
free slot and nobody waiting is admitted at once; otherwise it joins a queue
of at most ``max_waiting`` (``Refused('queue_full')`` when it is full) and
waits up to ``wait_seconds`` for a slot (``Refused('wait_timeout')`` after
that). ``release()`` ends one lease and hands the freed slot straight to the
oldest waiter, so a newcomer can never overtake the queue.

The handover races the waiter's own timeout or cancellation: the slot may be
handed to a waiter whose wait is ending at that very moment. The waiter then
owns a lease it will never use, so it gives it back (which hands the slot to
the next waiter) before it reports the timeout or the cancellation.

Run it under admitsim (docs/process-gate.md):

    "process": {"command": ["python3", "../../gate/process/python/admitsim_fifo.py", "gate.py:Gate"]}
"""

import asyncio
import collections
import contextlib


class Refused(Exception):
    """The gate turned a caller away; ``reason`` is 'queue_full' or 'wait_timeout'."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Gate:
    def __init__(self, max_active: int, max_waiting: int, wait_seconds: float) -> None:
        self.max_active = max_active
        self.max_waiting = max_waiting
        self.wait_seconds = wait_seconds
        self.active = 0
        self._queue: collections.deque[asyncio.Future] = collections.deque()

    async def acquire(self) -> None:
        """Take a lease, waiting in line for one if needed."""
        if self.active < self.max_active and not self._queue:
            self.active += 1
            return
        if len(self._queue) >= self.max_waiting:
            raise Refused("queue_full")
        slot = asyncio.get_running_loop().create_future()
        self._queue.append(slot)
        try:
            # shield: a timeout or a cancellation must not cancel `slot`
            # itself, so that release() can tell a queued waiter (slot
            # pending) from one it already handed the lease to (slot done).
            await asyncio.wait_for(asyncio.shield(slot), self.wait_seconds)
        except (TimeoutError, asyncio.CancelledError) as exc:
            if not slot.done():
                self._queue.remove(slot)          # still in line: just leave
            elif not slot.cancelled():
                self._give_back_handover(exc)     # promotion won: give the lease back
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise Refused("wait_timeout") from None

    def _give_back_handover(self, exc: BaseException) -> None:
        """The caller's wait ended (``exc``) after promotion handed it the lease: give that lease back."""
        self.release()

    def release(self) -> None:
        """End one lease; the slot goes to the oldest waiter, if any."""
        if self.active == 0:
            raise RuntimeError("release() without a lease")
        self.active -= 1
        if self._queue:
            slot = self._queue.popleft()
            self.active += 1                      # the waiter's lease from now on
            slot.set_result(None)

    @contextlib.asynccontextmanager
    async def lease(self):
        """``async with gate.lease(): ...`` holds a lease for the block."""
        await self.acquire()
        try:
            yield
        finally:
            self.release()
