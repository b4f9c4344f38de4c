"""gate.py with one deliberate bug, to show that admitsim catches it.

When a waiter is cancelled after release() already handed it the lease, this
gate forgets to give the lease back: the slot stays taken by a caller that
has gone away, and the gate runs one slot short from then on. (A waiter
whose wait times out after its promotion still gives the lease back; only
cancellation leaks.)

Everything else is gate.py's gate; see that file for the design.
"""

import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gate import Gate as _Gate  # noqa: E402
from gate import Refused  # noqa: E402,F401  (the refusal the adapter reads)


class Gate(_Gate):
    def _give_back_handover(self, exc: BaseException) -> None:
        if isinstance(exc, asyncio.CancelledError):
            return  # the bug: the cancelled caller's handed-over lease is never released
        super()._give_back_handover(exc)
