"""The FIFO driver: admitsim's protocol (version 1) mapped onto an asyncio gate.

``FifoDriver.handle(request) -> answer`` takes one request (a dict parsed from
a JSON line, docs/process-gate.md) and returns its answer (a dict). It owns a
``VirtualLoop`` per run (``start`` .. ``stop``) and, per ticket, the task that
runs ``await gate.acquire()``. Every request first advances the virtual clock
to its ``now`` (firing ordinary timers due on the way), then acts:

``acquire(t)``
    start t's task and run the loop until quiet at this instant. The task
    finished: ``admitted``; it raised a refusal whose reason is
    ``queue_full``: ``queue_full``; it still waits: ``queued`` with the
    earliest timer t's task armed as ``deadline`` (null if none).
``release``
    call the gate's release (awaited in a helper task when it returns an
    awaitable) with no ticket acting, so the waiter it promotes is stopped at
    its handover: its callbacks are held (see vloop). ``promoted`` is that
    ticket. A ``RuntimeError`` is the gate refusing an unbalanced release:
    ``ok: false``.
``claim(t)``
    t's held callbacks run (t's caller resumes); ``true`` when t was handed
    over and its acquire() then finished normally.
``expire(t)`` / ``cancel(t)``
    the leave is delivered first (t's due timers fire / ``task.cancel()``),
    the loop runs until quiet acting for t, and only then are t's held
    callbacks (if t was handed over) let go and the loop run again. So a
    leave of a handed-over ticket reaches the gate *before* the handover
    reaches the waiter: the race promotion won and the caller lost, which the
    gate must settle by releasing the lease itself. The driver counts the
    calls the gate makes to its own release during the step (it wraps the
    release method on the instance) and answers ``handover_released`` when
    there was one (``promoted``: the waiter that slot went to), ``removed``
    when t's acquire() ended with an exception and no lease was released (a
    waiter that left; or, for a handed-over ticket, a leaked lease, which
    admitsim's ledger catches), ``not_waiting`` when t was unknown, already
    done, or its acquire() returned normally after all (it kept its lease; it
    counts as claimed).

What we found in CPython 3.11 (``asyncio/tasks.py``). ``wait_for`` arms its
timeout with ``loop.call_later`` in the caller's task (so the timer is t's)
and awaits a private ``waiter`` future; on a CancelledError or on the timeout
it first checks ``fut.done()`` and, if the awaited future (here shield's
outer) is already done, *returns its result*: the cancellation or timeout
is swallowed. ``shield`` completes its outer future from a done-callback of
the inner one (``_inner_done_callback``), one loop iteration after the gate's
``set_result``. Holding only the waiter task's wakeup would let that chain
finish at promotion time, and every later cancel/expire of a handed-over
ticket would make acquire() return normally: the gate's "give the lease back"
branch would be dead code on 3.11. The loop therefore also holds the
done-callbacks of futures the ticket's task created (the gate's waiter future
among them), so a leave delivered before the claim finds shield's outer
future still pending, wait_for cancels it and raises (CancelledError or
TimeoutError), and the gate sees that its future is done: promotion won, it
releases the lease. If a gate's acquire() nevertheless returns normally
after a leave (e.g. it awaits a future made some other way), the answer is
``not_waiting``, as the gate really kept the lease.

A step that hands over more than one ticket, or hands one over where the
contract allows none (acquire, claim, a leave with no release), cannot be
said in the protocol: the answer is ``{"error": ...}`` naming them.
"""

from __future__ import annotations

import asyncio
import inspect
import random
import types
from typing import Any, Callable

from .driver_base import ProtocolError, SteppedDriver
from .driver_base import describe as _describe
from .driver_base import error as _error
from .driver_base import int_field as _int_field
from .vloop import LoopRunaway, VirtualLoop

__all__ = ["FifoDriver", "ProtocolError", "PROTOCOL_VERSION", "refusal_reason"]

PROTOCOL_VERSION = 1

# Requests whose handlers make a loop running themselves, where they need it:
# they close a loop (start replaces the run, stop ends it), which a running
# loop cannot be. Every other request runs inside its run's loop.running().
_OWN_RUNNING = frozenset(("start", "stop"))


def refusal_reason(exc: BaseException) -> str | None:
    """The reason a gate gave for refusing: ``exc.reason``, else ``str(exc)``/``args[0]``."""
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str):
        return reason
    if exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    text = str(exc)
    return text or None


def _isawaitable(value: Any) -> bool:
    """``inspect.isawaitable``, answered at once for the usual None (a sync
    release's result) and coroutine (an async method's)."""
    if value is None:
        return False
    if type(value) is types.CoroutineType:
        return True
    return inspect.isawaitable(value)


async def _await(awaitable):
    return await awaitable


class _Run:
    """One gate's run, from start to stop."""

    def __init__(self, loop: VirtualLoop, gate: Any, release: Callable[[], Any]) -> None:
        self.loop = loop
        self.gate = gate
        self.release = release          # the gate's own release, unwrapped
        self.releases = 0               # calls the gate made to its release that returned
        self.tasks: dict[int, asyncio.Task] = {}   # tickets whose acquire() has not ended
        self.seen: set[int] = set()                # every ticket acquire() was called for

    def prune(self) -> None:
        """Forget the tasks that ended (the loop lists their tickets as they
        end): a long run keeps only its live tickets."""
        ended = self.loop.ended
        for ticket in ended:
            task = self.tasks.pop(ticket, None)
            if task is not None and not task.cancelled():
                task.exception()  # retrieved: asyncio has nothing to complain about
        ended.clear()


class FifoDriver(SteppedDriver):
    """Serves protocol requests against gates made by ``factory``.

    ``factory(max_active, max_waiting, wait_seconds)`` makes a gate with an
    ``async`` method named ``acquire_name`` and a (sync or async) method named
    ``release_name``.

    While a request is handled, the process reads the driver's clock and (for
    every request but start and stop, which close loops) the run's loop is the
    thread's running loop, for the whole request; ``serving()`` keeps both in
    place between requests too.
    """

    def __init__(self, factory: Callable[..., Any], *, acquire_name: str = "acquire",
                 release_name: str = "release", log: Any = None) -> None:
        super().__init__(log)
        self.factory = factory
        self.acquire_name = acquire_name
        self.release_name = release_name
        self.run: _Run | None = None

    # -- entry point ---------------------------------------------------------

    def _handle(self, request: Any) -> dict[str, Any]:
        """``handle``, with the process on the driver's clock."""
        try:
            if not isinstance(request, dict):
                raise ProtocolError("a request must be a JSON object")
            kind = request.get("type")
            method = self._HANDLERS.get(kind) if isinstance(kind, str) else None
            if method is None:
                raise ProtocolError(f"unknown request type {kind!r}")
            run = self.run
            if kind != "start" and run is None:
                raise ProtocolError(f"{kind}: no gate is open (send start first)")
            try:
                if kind in _OWN_RUNNING or self._kept is not None:
                    return method(self, request)
                # The loop is the running loop for the whole step (as it is in
                # production for all the gate's code), made so once rather
                # than for each run of the loop within the step.
                with run.loop.running():
                    return method(self, request)
            finally:
                if self.run is not None:
                    if self.run.loop.ended:
                        self.run.prune()
                    if self._serving and self._kept is None:
                        self._keep_running()
        except ProtocolError as exc:
            return _error(str(exc))
        except LoopRunaway as exc:
            return _error(f"{request.get('type')}: {exc}")
        except Exception as exc:  # a bug of the adapter, or a gate breaking the loop
            self._trace(exc)
            return _error(f"{request.get('type')}: adapter failure: {_describe(exc)}")

    # -- helpers ---------------------------------------------------------------

    def _advance(self, req: dict) -> _Run:
        now = _int_field(req, "now", minimum=0)
        run = self.run
        assert run is not None
        if now < self.clock.now_ns:
            raise ProtocolError(f"{req['type']}: now {now} is before the previous request's {self.clock.now_ns}")
        loop = run.loop
        loop.handovers.clear()
        loop.advance_to(now)
        if loop.handovers:
            # A timer (not a request) woke a waiter: no answer can carry that.
            raise ProtocolError(
                f"{req['type']}: {self._tickets_text(loop.handovers)} was handed over by a timer while "
                f"time advanced to {now}; the protocol lets only release, expire and cancel promote")
        return run

    def _ticket(self, req: dict) -> int:
        return _int_field(req, "ticket", minimum=1)

    @staticmethod
    def _tickets_text(tickets: list) -> str:
        return ", ".join(f"ticket {t}" for t in tickets)

    def _wrap_release(self, run: _Run) -> None:
        """Count the gate's own calls to its release that return (or finish) normally."""
        original = run.release
        if inspect.iscoroutinefunction(original):
            async def counted_release(*args, **kwargs):
                result = await original(*args, **kwargs)
                run.releases += 1
                return result
        else:
            def counted_release(*args, **kwargs):
                result = original(*args, **kwargs)
                if _isawaitable(result):
                    async def finish():
                        value = await result
                        run.releases += 1
                        return value
                    return finish()
                run.releases += 1
                return result
        try:
            setattr(run.gate, self.release_name, counted_release)
        except (AttributeError, TypeError) as exc:
            raise ProtocolError(
                f"start: cannot watch the gate's {self.release_name}() (setting it on the instance "
                f"failed: {_describe(exc)}); the adapter needs it to see a handed-over lease released") from None

    _wind_down_text = "admitsim_fifo: stop: the gate"

    def _cancelled_first(self, run: _Run) -> list:
        return [run.tasks[ticket] for ticket in sorted(run.tasks)]

    # -- requests ----------------------------------------------------------------

    def _start(self, req: dict) -> dict[str, Any]:
        protocol = _int_field(req, "protocol")
        if protocol != PROTOCOL_VERSION:
            raise ProtocolError(f"start: protocol {protocol} is not supported (this adapter speaks {PROTOCOL_VERSION})")
        seed = _int_field(req, "seed")
        now = _int_field(req, "now", minimum=0)
        config = req.get("config")
        if not isinstance(config, dict):
            raise ProtocolError("start: missing field 'config' (an object)")
        max_active = _int_field(config, "max_active", minimum=0)
        max_waiting = _int_field(config, "max_waiting", minimum=0)
        wait_ns = _int_field(config, "wait_deadline_ns", minimum=0)

        self._teardown()
        random.seed(seed)
        self.clock.now_ns = now
        loop = VirtualLoop(self.clock)
        try:
            with loop.running():
                gate = self.factory(max_active, max_waiting, wait_ns / 1e9)
            if inspect.isawaitable(gate):
                helper = loop.create_task(_await(gate), name="admitsim-start")
                loop.run_until_quiet()
                if not helper.done():
                    raise ProtocolError("start: the gate factory's awaitable did not finish at the start instant")
                gate = helper.result()
            loop.run_until_quiet()
            for name in (self.acquire_name, self.release_name):
                if not callable(getattr(gate, name, None)):
                    raise ProtocolError(f"start: the gate ({type(gate).__name__}) has no method {name}()")
            run = _Run(loop, gate, getattr(gate, self.release_name))
            self._wrap_release(run)
        except ProtocolError:
            loop.close()
            raise
        except Exception as exc:
            loop.close()
            self._trace(exc)
            return _error(f"start: the gate factory raised {_describe(exc)}")
        self.run = run
        return {"ok": True}

    def _stop(self, req: dict) -> dict[str, Any]:
        _int_field(req, "now", minimum=0)
        self._teardown()
        return {"ok": True}

    def _acquire(self, req: dict) -> dict[str, Any]:
        ticket = self._ticket(req)
        run = self._advance(req)
        if ticket in run.seen:
            raise ProtocolError(f"acquire: ticket {ticket} was used before")
        run.seen.add(ticket)
        loop = run.loop
        mark = len(loop.handovers)
        acquire = getattr(run.gate, self.acquire_name)

        async def ticket_main():
            # Called inside the ticket's task, so that all of acquire() (even
            # a sync prologue before it returns an awaitable) runs as the ticket.
            result = acquire()
            if _isawaitable(result):
                result = await result
            return result

        task = loop.spawn(ticket, ticket_main(), name=f"admitsim-ticket-{ticket}")
        run.tasks[ticket] = task
        loop.run_until_quiet(acting_for=ticket)
        others = loop.handovers[mark:]
        if others:
            return _error(f"acquire(ticket {ticket}) handed over {self._tickets_text(others)}, "
                          "which the protocol does not allow")
        if not task.done():
            return {"result": "queued", "deadline": loop.owner_deadline_ns(ticket)}
        if task.cancelled():
            return _error(f"acquire(ticket {ticket}) was cancelled")
        exc = task.exception()
        if exc is None:
            return {"result": "admitted"}
        if refusal_reason(exc) == "queue_full":
            return {"result": "queue_full"}
        self._trace(exc)
        return _error(f"acquire(ticket {ticket}) raised {_describe(exc)}")

    def _release(self, req: dict) -> dict[str, Any]:
        run = self._advance(req)
        loop = run.loop
        mark = len(loop.handovers)
        failure: BaseException | None = None
        # No ticket acting: the waiter release() promotes has its callbacks held.
        try:
            result = run.release()
        except Exception as exc:
            failure = exc
        else:
            if _isawaitable(result):
                helper = loop.create_task(_await(result), name="admitsim-release")
                loop.run_until_quiet()
                if not helper.done():
                    return _error("release() did not finish at its instant (it awaits something that never comes)")
                if helper.cancelled():
                    failure = asyncio.CancelledError()
                else:
                    failure = helper.exception()
        loop.run_until_quiet()
        promoted = loop.handovers[mark:]
        if failure is not None:
            if isinstance(failure, RuntimeError) and not promoted:
                return {"ok": False, "promoted": None}
            if promoted:
                return _error(f"release() raised {_describe(failure)} after handing over {self._tickets_text(promoted)}")
            self._trace(failure)
            return _error(f"release() raised {_describe(failure)}")
        if len(promoted) > 1:
            return _error(f"release() handed over {self._tickets_text(promoted)}; the protocol allows one per call")
        return {"ok": True, "promoted": promoted[0] if promoted else None}

    def _claim(self, req: dict) -> dict[str, Any]:
        ticket = self._ticket(req)
        run = self._advance(req)
        loop = run.loop
        task = run.tasks.get(ticket)
        if task is None or not loop.is_held(ticket):
            return {"claimed": False}
        mark = len(loop.handovers)
        loop.unhold(ticket)
        loop.run_until_quiet(acting_for=ticket)
        others = loop.handovers[mark:]
        if others:
            return _error(f"claim(ticket {ticket}) handed over {self._tickets_text(others)}, "
                          "which the protocol does not allow")
        if not task.done():
            return _error(f"claim(ticket {ticket}): its acquire() went on waiting after its wakeup")
        if task.cancelled() or task.exception() is not None:
            # The gate woke the waiter and then refused it: it did not get the lease.
            return {"claimed": False}
        return {"claimed": True}

    def _leave(self, req: dict, kind: str) -> dict[str, Any]:
        ticket = self._ticket(req)
        run = self._advance(req)
        loop = run.loop
        task = run.tasks.get(ticket)
        if task is None or task.done():
            return {"result": "not_waiting", "promoted": None}
        call = f"{kind}(ticket {ticket})"
        was_held = loop.is_held(ticket)
        releases = run.releases
        mark = len(loop.handovers)
        fire = ticket if kind == "expire" else None
        if kind == "cancel":
            task.cancel()
        # The leave first, then the handover it raced (module doc).
        loop.run_until_quiet(acting_for=ticket, fire_owned=fire)
        loop.unhold(ticket)
        loop.run_until_quiet(acting_for=ticket, fire_owned=fire)
        released = run.releases - releases
        others = [t for t in loop.handovers[mark:] if t != ticket]
        if len(others) > 1:
            return _error(f"{call} handed over {self._tickets_text(others)}; the protocol allows one per call")
        if released:
            if released > 1:
                print(f"admitsim_fifo: {call}: the gate released {released} leases in one step", file=self.log)
            # Also when the ticket was only waiting: the gate released a lease
            # it did not hand over, and admitsim's ledger says so.
            return {"result": "handover_released", "promoted": others[0] if others else None}
        if others:
            return _error(f"{call} handed over {self._tickets_text(others)} without releasing a lease")
        if not task.done():
            what = "its deadline timers fired" if kind == "expire" else "it was cancelled"
            return _error(f"{call}: its acquire() is still waiting after {what}")
        if not task.cancelled() and task.exception() is None:
            # acquire() returned normally: the caller has its lease after all.
            return {"result": "not_waiting", "promoted": None}
        if was_held:
            note = "it had been handed a lease and the gate did not release it"
            print(f"admitsim_fifo: {call}: {note}", file=self.log)
        return {"result": "removed", "promoted": None}

    def _expire(self, req: dict) -> dict[str, Any]:
        return self._leave(req, "expire")

    def _cancel(self, req: dict) -> dict[str, Any]:
        return self._leave(req, "cancel")

    _HANDLERS = {
        "start": _start,
        "stop": _stop,
        "acquire": _acquire,
        "release": _release,
        "claim": _claim,
        "expire": _expire,
        "cancel": _cancel,
    }
