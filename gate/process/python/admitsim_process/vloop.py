"""A virtual-time asyncio event loop that the driver steps by hand.

``VirtualLoop`` is an ``asyncio.BaseEventLoop`` that never blocks, never polls
for I/O and never reads the wall clock. Its ``time()`` is a virtual clock
(``VirtualClock.now_ns / 1e9``) that only the driver moves. Instead of
``run_forever`` the driver calls:

* ``run_until_quiet()``: run ready callbacks (and unowned timers already due)
  until nothing is left to do at the current virtual instant;
* ``advance_to(ns)``: move the clock forward, firing the unowned timers that
  fall due on the way, one at a time and in time order, running the loop to
  quiescence after each.

Everything is ordered by (virtual nanoseconds, arming order), never by a wall
clock or an address, so the same calls give the same schedule.

Owners (the driver's tickets)
-----------------------------
The loop knows *owners*: a task started with ``spawn(owner, coro)`` belongs to
``owner``, and the loop attributes work to it in two ways.

Timers. A timer armed (``call_at``/``call_later``) while ``current_task()`` is
an owner's task belongs to that owner. Owned timers never fire when time
advances: they fire only inside ``run_until_quiet(fire_owned=owner)``, which is
how the driver delivers ``expire(t)``. Their deadline is kept as an exact
integer of nanoseconds (``now_ns + round(delay * 1e9)`` for ``call_later``;
``call_at(when)`` is converted relative to the current instant, so
``loop.time() + d`` gives the same integer as ``call_later(d)``): no float
drift reaches the protocol. Once an owner's task is done, whatever it still
has armed becomes ordinary (unowned) timers.

Held callbacks. A callback scheduled with ``call_soon`` belongs to an owner
when it is a step of that owner's task (``handle._callback.__self__`` is the
task: true of the C ``TaskStepMethWrapper`` and ``task_wakeup`` of 3.11 as of
the pure-Python ``Task.__step``/``__wakeup`` bound methods), or when its first
argument is a future made by ``loop.create_future()`` while that owner's task
was running (a future's done-callbacks are scheduled as ``cb(fut)``). Such a
callback, scheduled for an owner whose task is still pending, is not run by a
``run_until_quiet`` that is not acting for that owner (its ``acting_for``): it
is kept aside ("held") until the driver calls ``unhold(owner)``. That is how the
gate's promotion of a waiter is stopped before it reaches the waiter: the
waiter is "handed over, unclaimed" for as long as its callbacks are held.
``handovers`` lists, in order, every owner that went from nothing held to
something held (the driver clears it at each request), so the driver can
tell which ticket a step handed over. ``ended`` lists, in order, the owners
whose task ended (the loop has forgotten them; the driver takes them from
the list to forget their tasks too).

Why the future rule, and not only the task's own wakeup: in Python 3.11
``asyncio.wait_for(shield(fut), t)`` checks, when a cancellation or its
timeout reaches it, whether the awaited (shield's outer) future is done and if
so *returns its result*, swallowing the cancellation. If only the task's
wakeup were held, the shield's callbacks would complete the outer future at
promotion time, and a later cancel or expire of the handed-over ticket could
never reach the gate's "promotion won the race" branch: the gate would keep
the lease and answer as if it was claimed. Holding the callbacks of the
waiter's own futures keeps the handover where the gate left it (its future
done, nothing downstream run), so a leave delivered before ``unhold`` reaches
the gate as the cancellation or timeout of a waiter whose promotion already
happened, which is the race the protocol's ``handover_released`` describes.
A gate whose futures are not made by ``loop.create_future()`` (e.g.
``asyncio.Future()``) still has its task's wakeup held, by the first rule.

Exceptions that nobody retrieves (a task that failed and was never awaited,
an exception inside a callback) go to ``recorded_errors`` instead of stderr.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import math
import random
import sys
import threading
import time
import uuid
import weakref
from typing import Any, Callable, Hashable

__all__ = [
    "EPOCH_S",
    "TokenUUID",
    "give_token",
    "LoopRunaway",
    "VirtualClock",
    "VirtualLoop",
    "virtual_process",
]

# time.time() under virtual time: this fixed epoch plus the virtual clock.
EPOCH_S = 1_700_000_000

# asyncio's running-loop slot (the functions behind get_running_loop()), and
# current_task, looked up once.
_get_running_loop = asyncio._get_running_loop
_set_running_loop = asyncio._set_running_loop
_current_task = asyncio.current_task

# Callbacks one run_until_quiet may run before the loop gives up: a gate that
# keeps rescheduling itself at one instant would otherwise never settle.
DEFAULT_CALLBACK_LIMIT = 1_000_000


class LoopRunaway(RuntimeError):
    """The loop did not become quiet within its callback limit."""


class VirtualClock:
    """The virtual clock, in integer nanoseconds. Only the driver moves it.

    ``wall_offset_ns`` is what ``time.time_ns()`` adds to it: EPOCH_S by
    default; a driver whose process has a wall clock of its own (a lease
    worker's, which admitsim sends with every message) sets it.
    """

    __slots__ = ("now_ns", "wall_offset_ns")

    def __init__(self, now_ns: int = 0) -> None:
        self.now_ns = now_ns
        self.wall_offset_ns = EPOCH_S * 1_000_000_000

    def seconds(self) -> float:
        return self.now_ns / 1e9


class _OwnedTimer(asyncio.TimerHandle):
    """A TimerHandle that also carries its exact deadline and its owner."""

    __slots__ = ("deadline_ns", "owner", "seq")


class _FutureRef(weakref.ref):
    """A weak reference to a future made in an owner's task, with that owner
    and the key (the future's id) it is filed under."""

    __slots__ = ("key", "owner")


class VirtualLoop(asyncio.BaseEventLoop):
    """An event loop on virtual time, stepped by its driver (see module doc)."""

    def __init__(self, clock: VirtualClock, *, callback_limit: int = DEFAULT_CALLBACK_LIMIT,
                 inherit_owner: bool = False) -> None:
        super().__init__()
        # With inherit_owner, a task created while an owner's task (or one of its sub-tasks) runs belongs
        # to that owner too (wait_for's and gather's inner tasks, a task the owner spawns): its steps, its
        # timers and its calls are the owner's. The lease driver's operations want that; the FIFO driver's
        # tickets do not (their handover is the ticket's own task).
        self.inherit_owner = inherit_owner
        # Debug mode would capture stack traces and time callbacks with the
        # wall clock; the virtual loop is always quiet and deterministic.
        self._debug = False
        self.clock = clock
        self.callback_limit = callback_limit
        self._queue: collections.deque[asyncio.Handle] = collections.deque()
        self._timers: list[tuple[int, int, _OwnedTimer]] = []          # unowned: (ns, seq, handle)
        self._owned_timers: dict[Hashable, list[tuple[int, int, _OwnedTimer]]] = {}
        self._seq = 0
        self._owner_task: dict[Hashable, asyncio.Task] = {}
        self._task_owner: dict[int, tuple[asyncio.Task, Hashable]] = {}  # id(task) -> (task, owner)
        # id(future) -> weak reference carrying the owner, for futures made by
        # create_future() in an owner's task; an entry goes when its future does.
        self._future_owner: dict[int, _FutureRef] = {}
        self._held: dict[Hashable, list[asyncio.Handle]] = {}
        self.handovers: list[Hashable] = []
        self.ended: list[Hashable] = []
        self._holding = True
        self.recorded_errors: list[dict[str, Any]] = []
        self.set_exception_handler(self._record_error)

    # -- the clock -------------------------------------------------------

    def time(self) -> float:
        return self.clock.now_ns / 1e9

    def _deadline_ns(self, when: float) -> int:
        """The integer deadline of ``call_at(when)``, exact for when = time() + d."""
        now_ns = self.clock.now_ns
        if not math.isfinite(when):
            return math.inf  # never (a NaN too: it would never compare due)
        return now_ns + round((when - now_ns / 1e9) * 1e9)

    # -- scheduling (overrides of BaseEventLoop) ------------------------------

    def call_soon(self, callback: Callable[..., Any], *args: Any, context: Any = None) -> asyncio.Handle:
        if self._closed:
            self._check_closed()    # raises asyncio's error
        handle = asyncio.Handle(callback, args, self, context)
        self._queue.append(handle)
        return handle

    def _call_soon(self, callback, args, context):  # used by some asyncio internals
        return self.call_soon(callback, *args, context=context)

    def call_soon_threadsafe(self, callback, *args, context=None):
        # There are no other threads on virtual time; this is call_soon.
        return self.call_soon(callback, *args, context=context)

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any, context: Any = None):
        if delay is None:
            raise TypeError("delay must not be None")
        deadline = self.clock.now_ns + round(delay * 1e9) if math.isfinite(delay) else math.inf
        return self._arm(self.time() + delay, deadline, callback, args, context)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any, context: Any = None):
        if when is None:
            raise TypeError("when cannot be None")
        return self._arm(when, self._deadline_ns(when), callback, args, context)

    def _arm(self, when, deadline_ns, callback, args, context) -> _OwnedTimer:
        if self._closed:
            self._check_closed()    # raises asyncio's error
        timer = _OwnedTimer(when, callback, args, self, context)
        timer.deadline_ns = deadline_ns
        timer.seq = self._seq
        self._seq += 1
        timer._scheduled = True
        owner = timer.owner = self._current_owner()
        entry = (deadline_ns, timer.seq, timer)
        if owner is None:
            heapq.heappush(self._timers, entry)
        else:
            heapq.heappush(self._owned_timers.setdefault(owner, []), entry)
        return timer

    def _timer_handle_cancelled(self, handle) -> None:
        # Cancelled timers stay in their heap and are skipped when they surface.
        pass

    def create_task(self, coro, *, name=None, context=None):
        task = super().create_task(coro, name=name, context=context)
        if self.inherit_owner:
            owner = self._current_owner()
            if owner is not None:
                self._task_owner[id(task)] = (task, owner)
                task.add_done_callback(self._sub_task_done)
        return task

    def _sub_task_done(self, task: asyncio.Task) -> None:
        entry = self._task_owner.get(id(task))
        if entry is not None and entry[0] is task and self._owner_task.get(entry[1]) is not task:
            del self._task_owner[id(task)]

    def create_future(self) -> asyncio.Future:
        fut = asyncio.Future(loop=self)
        owner = self._current_owner()
        if owner is not None:
            ref = _FutureRef(fut, self._forget_future)
            ref.key = id(fut)
            ref.owner = owner
            self._future_owner[ref.key] = ref
        return fut

    def _current_owner(self) -> Hashable | None:
        """The owner of the task running now, or None (no task, not an owner's,
        or the loop is not running)."""
        if self._thread_id is None:     # not running (BaseEventLoop.is_running)
            return None
        task = _current_task(self)
        entry = self._task_owner.get(id(task))
        if entry is None or entry[0] is not task:
            return None
        # A sub-task (inherit_owner) outliving its owner's task acts for no one.
        return entry[1] if entry[1] in self._owner_task else None

    def _forget_future(self, ref: _FutureRef) -> None:
        """A future made in an owner's task is gone: drop its entry."""
        if self._future_owner.get(ref.key) is ref:
            del self._future_owner[ref.key]

    def run_in_executor(self, executor, func, *args):
        """Run ``func(*args)`` at once, in this thread, and return a done future.

        Virtual time has no other threads: work handed to an executor
        (``asyncio.to_thread`` included) runs inline at the current instant and
        takes no virtual time, so its result, and when it arrives, never depend
        on a real thread's timing. (The scenario's service time is where a
        request's work takes time.)
        """
        self._check_closed()
        fut = self.create_future()
        try:
            fut.set_result(func(*args))
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            fut.set_exception(exc)
        return fut

    def run_forever(self):
        raise RuntimeError("a VirtualLoop is stepped by its driver; it has no run_forever")

    def run_until_complete(self, future):
        raise RuntimeError("a VirtualLoop is stepped by its driver; it has no run_until_complete")

    def close(self) -> None:
        if self.is_closed():
            return
        self._queue.clear()
        self._timers.clear()
        self._owned_timers.clear()
        self._held.clear()
        self._future_owner.clear()
        super().close()

    def _record_error(self, loop, context: dict[str, Any]) -> None:
        """Exception handler: keep what asyncio would have logged, print nothing."""
        if len(self.recorded_errors) < 1000:
            self.recorded_errors.append(dict(context))

    # -- owners ----------------------------------------------------------

    def spawn(self, owner: Hashable, coro, *, name: str | None = None) -> asyncio.Task:
        """Start ``coro`` as ``owner``'s task (the step runs at the next run)."""
        if owner in self._owner_task:
            raise ValueError(f"owner {owner!r} already has a task")
        task = self.create_task(coro, name=name)
        self._owner_task[owner] = task
        self._task_owner[id(task)] = (task, owner)
        task.add_done_callback(self._owner_task_done)
        return task

    def _owner_of_task(self, task) -> Hashable | None:
        if task is None:
            return None
        entry = self._task_owner.get(id(task))
        if entry is None or entry[0] is not task:
            return None
        return entry[1]

    def _owner_task_done(self, task: asyncio.Task) -> None:
        """An owner's task ended: its timers become ordinary, its held callbacks
        run, and the loop forgets the owner."""
        owner = self._owner_of_task(task)
        if owner is None:
            return
        for entry in self._owned_timers.pop(owner, []):
            if not entry[2].cancelled():
                heapq.heappush(self._timers, entry)
        self._queue.extend(self._held.pop(owner, []))
        del self._task_owner[id(task)]
        del self._owner_task[owner]
        self.ended.append(owner)

    def _owner_of_handle(self, handle: asyncio.Handle) -> Hashable | None:
        """The owner a scheduled callback acts for, or None (see module doc)."""
        # This runs for every callback: the lookups are written out.
        target = getattr(handle._callback, "__self__", None)
        entry = self._task_owner.get(id(target))
        if entry is not None and entry[0] is target and entry[1] is not None:
            # A step of an owner's task (target is _owner_task[owner] itself), or of a sub-task of it
            # (inherit_owner) while the owner's task lives.
            if target.done():
                return None
            main = self._owner_task.get(entry[1])
            return entry[1] if main is not None and not main.done() else None
        args = handle._args
        if not args:
            return None
        ref = self._future_owner.get(id(args[0]))
        if ref is None or ref() is not args[0] or ref.owner is None:
            return None
        task = self._owner_task.get(ref.owner)
        if task is None or task.done():
            return None
        return ref.owner

    def stop_holding(self) -> None:
        """Run every owner's callbacks from now on (teardown); held ones are released."""
        self._holding = False
        for owner in sorted(self._held, key=repr):
            self.unhold(owner)

    def is_held(self, owner: Hashable) -> bool:
        """Whether ``owner`` has callbacks held (cancelled ones do not count)."""
        for handle in self._held.get(owner, ()):
            if not handle._cancelled:
                return True
        return False

    def unhold(self, owner: Hashable) -> bool:
        """Queue ``owner``'s held callbacks again, in the order they were scheduled."""
        handles = self._held.pop(owner, None)
        if not handles:
            return False
        self._queue.extend(handles)
        return True

    def owner_deadline_ns(self, owner: Hashable) -> int | None:
        """The earliest live timer ``owner`` has armed, in integer ns, or None
        (none armed, or only timers that never fire)."""
        heap = self._owned_timers.get(owner)
        while heap and heap[0][2]._cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap and heap[0][0] != math.inf else None

    # -- running -----------------------------------------------------------

    def running(self) -> "_Running":
        """A ``with`` block that makes this the running loop of the thread, as
        run_forever would (re-entrant: inside one, another does nothing).

        The driver holds one around each whole request (or, serving, from one
        request to the next), so the loop's own ``run_until_quiet`` calls
        within a request find it running already.
        """
        return _Running(self)

    def _next_due(self, fire_owned: Hashable | None) -> _OwnedTimer | None:
        """Pop the earliest live timer due now (unowned, or ``fire_owned``'s)."""
        now = self.clock.now_ns
        best = self._timers
        while best and best[0][2]._cancelled:
            heapq.heappop(best)
        if not best or best[0][0] > now:
            best = None
        owned = self._owned_timers.get(fire_owned) if fire_owned is not None else None
        if owned:
            while owned and owned[0][2]._cancelled:
                heapq.heappop(owned)
            if owned and owned[0][0] <= now and (best is None or owned[0][:2] < best[0][:2]):
                best = owned
        if best is None:
            return None
        timer = heapq.heappop(best)[2]
        timer._scheduled = False
        return timer

    def run_until_quiet(self, *, acting_for: Hashable | None = None,
                        fire_owned: Hashable | None = None) -> None:
        """Run callbacks until none are ready and no timer is due at this instant.

        ``acting_for``'s callbacks run; every other owner's are held (see
        module doc), set aside rather than run. Unowned timers due now fire;
        so do ``fire_owned``'s, merged in time order.
        """
        if _get_running_loop() is not self:
            with self.running():
                return self.run_until_quiet(acting_for=acting_for, fire_owned=fire_owned)
        budget = self.callback_limit
        queue = self._queue
        while True:
            while queue:
                handle = queue.popleft()
                if handle._cancelled:
                    continue
                if self._holding:
                    owner = self._owner_of_handle(handle)
                    if owner is not None and owner != acting_for:
                        held = self._held.setdefault(owner, [])
                        if not held:
                            self.handovers.append(owner)
                        held.append(handle)
                        continue
                budget -= 1
                if budget < 0:
                    raise LoopRunaway(
                        f"the loop ran {self.callback_limit} callbacks at t={self.clock.now_ns} ns "
                        "without becoming quiet")
                handle._run()
            timers = self._timers
            if fire_owned is None and (not timers or timers[0][0] > self.clock.now_ns):
                return      # no unowned timer due (what _next_due would find)
            timer = self._next_due(fire_owned)
            if timer is None:
                return
            queue.append(timer)

    def advance_to(self, now_ns: int) -> None:
        """Move the clock to ``now_ns``, firing unowned timers due on the way
        (and running the loop until quiet at ``now_ns``)."""
        if now_ns < self.clock.now_ns:
            raise ValueError(f"time went backwards: {now_ns} < {self.clock.now_ns}")
        heap = self._timers
        while True:
            while heap and heap[0][2]._cancelled:
                heapq.heappop(heap)
            if not heap or heap[0][0] > now_ns:
                break
            self.clock.now_ns = max(self.clock.now_ns, heap[0][0])
            self.run_until_quiet()
        self.clock.now_ns = now_ns
        # No timer is due at now_ns any more, so only ready callbacks (none,
        # after a step that ended quiet) would give the last run work.
        if self._queue:
            self.run_until_quiet()


class _Running:
    """``VirtualLoop.running()``: the loop is the thread's running loop inside."""

    __slots__ = ("loop", "old_hooks")

    def __init__(self, loop: VirtualLoop) -> None:
        self.loop = loop
        self.old_hooks = None   # set when this block made the loop running

    def __enter__(self) -> None:
        loop = self.loop
        current = _get_running_loop()
        if current is loop:
            return
        if current is not None:
            raise RuntimeError("another event loop is running in this thread")
        loop._check_closed()
        self.old_hooks = sys.get_asyncgen_hooks()
        loop._thread_id = threading.get_ident()
        sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook, finalizer=loop._asyncgen_finalizer_hook)
        _set_running_loop(loop)

    def __exit__(self, *exc_info: Any) -> None:
        if self.old_hooks is None:
            return
        _set_running_loop(None)
        sys.set_asyncgen_hooks(*self.old_hooks)
        self.loop._thread_id = None
        self.old_hooks = None


# -- the process under virtual time ------------------------------------------

_ORIGINALS: list[tuple[Any, str, Any]] = []
_CLOCKS: list[VirtualClock] = []   # a stack: the innermost virtual_process block's clock is read


class TokenUUID(uuid.UUID):
    """A UUID whose ``hex`` and ``str()`` are a token admitsim names a permit
    by (``w3-17``): what ``uuid4()`` returns once after ``give_token``."""

    @property
    def hex(self) -> str:  # type: ignore[override]
        return self.__dict__["_token"]

    def __str__(self) -> str:
        return self.__dict__["_token"]

    def __repr__(self) -> str:
        return f"TokenUUID({self.__dict__['_token']!r})"


# The token the next uuid4() returns (then forgotten): a one-slot list.
_NEXT_TOKEN: list[str | None] = [None]


def give_token(token: str | None) -> None:
    """Make the next ``uuid.uuid4()`` (under virtual_process) return a
    TokenUUID of ``token``; None forgets a token not taken."""
    _NEXT_TOKEN[0] = token


def _virtual_uuid4() -> uuid.UUID:
    value = uuid.UUID(int=random.getrandbits(128), version=4)
    token = _NEXT_TOKEN[0]
    if token is None:
        return value
    _NEXT_TOKEN[0] = None
    made = TokenUUID(int=value.int)
    made.__dict__["_token"] = token
    return made


def _mono_ns() -> int:
    return _CLOCKS[-1].now_ns


def _mono() -> float:
    return _CLOCKS[-1].now_ns / 1e9


def _wall_ns() -> int:
    clock = _CLOCKS[-1]
    return clock.wall_offset_ns + clock.now_ns


def _wall() -> float:
    return _wall_ns() / 1e9


_PATCHES = (
    (time, "monotonic", _mono),
    (time, "monotonic_ns", _mono_ns),
    (time, "perf_counter", _mono),
    (time, "perf_counter_ns", _mono_ns),
    (time, "time", _wall),
    (time, "time_ns", _wall_ns),
    (uuid, "uuid4", _virtual_uuid4),
)


class virtual_process:
    """``with virtual_process(clock):`` makes the process read ``clock``:
    time.monotonic/time/perf_counter and their ``_ns`` twins (time.time is
    EPOCH_S plus the virtual clock), and ``uuid.uuid4`` drawn from ``random``
    (which the driver seeds on start).

    Blocks nest: the innermost block's clock is the one read; the originals
    come back when the outermost block exits. (A class rather than a
    generator-based context manager: it is cheap to enter, which the driver
    does for every request it handles outside ``serving()``.)
    """

    __slots__ = ("clock",)

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock

    def __enter__(self) -> None:
        if not _CLOCKS:
            for module, name, fake in _PATCHES:
                _ORIGINALS.append((module, name, getattr(module, name)))
                setattr(module, name, fake)
        _CLOCKS.append(self.clock)

    def __exit__(self, *exc_info: Any) -> None:
        _CLOCKS.pop()
        if not _CLOCKS:
            for module, name, original in _ORIGINALS:
                setattr(module, name, original)
            _ORIGINALS.clear()
