"""The lease driver: admitsim's fleet-client protocol (version 1) mapped onto an asyncio lease client.

One child process is one worker of admitsim's fleet, with that worker's
clocks. ``LeaseDriver.handle(request) -> answer`` takes one request (a dict
parsed from a JSON line, docs/process-gate.md, "A fleet's client") and returns
its answer. ``start`` makes the client: ``FACTORY(redis, settings)``, where
``redis`` is the adapter's client object (redis_shim.Redis: every call it
makes becomes a step admitsim carries through its network and faults to its
Redis node) and ``settings`` the gate's values (key, limit, lease_ms,
acquire_timeout_s, backoff) as attributes. Then admitsim runs operations on it,
one message per input, each answered with the operation's next step:

``acquire`` (op, token)
    start the operation's task, which enters the client's ``hold()`` (an
    async context manager, the seed document's shape) or awaits its
    ``acquire()``. The first ``uuid.uuid4()`` the task draws is the token, so
    the permit the client adds is named as admitsim names it (``w3-17``).
``release`` (op, token)
    the task leaves that ``hold()`` (``__aexit__``), or awaits ``release(x)``
    with what ``acquire()`` returned.
``reply`` / ``lost`` (op)
    the reply to the operation's command in flight, or (lost) its
    ``ConnectionError``: the call may or may not have run.
``woke`` (op)
    the operation's earliest timer is due: its timers due by ``now`` fire.

An input may carry ``ahead`` (admitsim's promise that nothing but the
operation's own timer reaches the worker until ``until``, with its wall clock
reading ``(t + wall_base) // 1e6`` ms): a wait within it is answered with the
step of its wake-up as well (``_run_ahead``), and that wake-up is never sent.

Each input runs the loop until quiet at ``now`` for that operation (its held
callbacks released, its timers fired when woken), then answers its next step:
``{"done": OUTCOME}`` once the task ended; ``{"command": [...]}`` while a
Redis call waits for its reply (with ``"timeout_at"`` when the operation also
has a timer armed: admitsim then gives up on the reply at that instant and
sends ``woke``); ``{"wait_until": NS}``, its earliest timer, when it only
waits. An operation that waits on neither is an error (nothing admitsim sends
could wake it). Timers a task arms belong to its operation and fire only on
that operation's ``woke``; a callback another operation made ready waits for
its own operation's next input.

Outcomes. An acquire that returned (a truthy value; an int >= 1 is its
value, as a fencing number) is ``granted``; one that returned a falsy value
or raised ``TimeoutError`` (the builtin, or asyncio's) is ``acquire_timeout``;
one that raised anything else is ``unreachable`` (a ``RedisError``: Redis could
not confirm; any other exception is printed to stderr first). A release that
returned is ``released``; one that raised ``ConnectionError`` or the client's
``TimeoutError`` is ``lost``; anything else ``unreachable``.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import random
import types
from typing import Any, Callable

from . import redis_shim
from .driver_base import ProtocolError, SteppedDriver
from .driver_base import describe as _describe
from .driver_base import error as _error
from .driver_base import int_field as _int_field
from .vloop import LoopRunaway, VirtualLoop, give_token

__all__ = ["LeaseDriver", "ProtocolError", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = 1
_INT64_MAX = 2**63 - 1  # a promise without "until" lasts while (t + wall_base) fits admitsim's clock


async def _await(value: Any) -> Any:
    return await value


class _Op:
    __slots__ = ("id", "kind", "token", "task", "queue", "in_flight")

    def __init__(self, op_id: int, kind: str, token: str) -> None:
        self.id = op_id
        self.kind = kind
        self.token = token
        self.task: asyncio.Task | None = None
        self.queue: collections.deque = collections.deque()  # (words, future) not sent yet
        self.in_flight: tuple[list[bytes], asyncio.Future] | None = None


class _Run:
    """One worker process's life: start .. stop (or the child's end)."""

    def __init__(self, loop: VirtualLoop, client: Any, redis: redis_shim.Redis) -> None:
        self.loop = loop
        self.client = client
        self.redis = redis
        self.ops: dict[int, _Op] = {}
        self.holds: dict[str, Any] = {}   # token -> the hold() context manager, or acquire()'s value
        self.errors: list[str] = []       # adapter failures found inside the client's tasks


class LeaseDriver(SteppedDriver):
    """Serves the fleet-client protocol against clients made by ``factory(redis, settings)``.

    ``hold_name``: the client's async context manager method (default ``hold``
    when the client has one); otherwise ``acquire_name`` (async, returns the
    permit) and ``release_name`` (sync or async, given what acquire returned).
    """

    def __init__(self, factory: Callable[..., Any], *, hold_name: str | None = None, acquire_name: str = "acquire",
                 release_name: str = "release", log: Any = None) -> None:
        super().__init__(log)
        self.factory = factory
        self.hold_name = hold_name
        self.acquire_name = acquire_name
        self.release_name = release_name
        self.run: _Run | None = None
        self._use_hold = False
        self._hold = "hold"

    # -- entry point ---------------------------------------------------------

    def _handle(self, request: Any) -> dict[str, Any]:
        try:
            if not isinstance(request, dict):
                raise ProtocolError("a request must be a JSON object")
            kind = request.get("type")
            method = self._HANDLERS.get(kind) if isinstance(kind, str) else None
            if method is None:
                raise ProtocolError(f"unknown request type {kind!r}")
            if kind != "start" and self.run is None:
                raise ProtocolError(f"{kind}: no client is open (send start first)")
            if kind in ("start", "stop"):
                self._let_go()
                return method(self, request)
            try:
                with self.run.loop.running():
                    answer = method(self, request)
                    ahead = request.get("ahead")
                    if ahead is not None:
                        answer = self._run_ahead(request, answer, ahead)
                    return answer
            finally:
                if self._serving and self._kept is None and self.run is not None:
                    self._keep_running()
        except ProtocolError as exc:
            return _error(str(exc))
        except LoopRunaway as exc:
            return _error(f"{request.get('type')}: {exc}")
        except Exception as exc:  # a bug of the adapter, or a client breaking the loop
            self._trace(exc)
            return _error(f"{request.get('type') if isinstance(request, dict) else 'request'}: adapter failure: "
                          f"{_describe(exc)}")

    # -- time ------------------------------------------------------------------

    def _advance(self, req: dict) -> _Run:
        now = _int_field(req, "now", minimum=0)
        wall_ms = _int_field(req, "wall_ms")
        run = self.run
        assert run is not None
        if now < self.clock.now_ns:
            raise ProtocolError(f"{req['type']}: now {now} is before the previous request's {self.clock.now_ns}")
        run.loop.advance_to(now)
        # The worker's wall clock reads wall_ms now (its offset, drift and steps are admitsim's).
        self.clock.wall_offset_ns = wall_ms * 1_000_000 - now
        return run

    # -- the client's calls -------------------------------------------------------

    async def _send(self, words: list[bytes]) -> Any:
        """The Redis client's sender: queue the call on the operation whose task makes it."""
        run = self.run
        if run is None:
            raise redis_shim.ConnectionError("no client is open")
        loop = run.loop
        owner = loop._current_owner()
        op = run.ops.get(owner) if owner is not None else None
        if op is None:
            text = (f"the client called Redis ({words[0].decode('utf-8', 'replace')}) outside an operation admitsim "
                    f"started (a task of its own): admitsim carries only an operation's calls")
            run.errors.append(text)
            raise redis_shim.ConnectionError(text)
        fut = loop.create_future()
        op.queue.append((words, fut))
        return await fut

    # -- steps -------------------------------------------------------------------

    def _step(self, run: _Run, op: _Op) -> dict[str, Any]:
        if redis_shim.misuse:
            run.errors.extend(redis_shim.misuse)
            redis_shim.misuse.clear()
        if run.errors:
            raise ProtocolError(run.errors[0])
        loop = run.loop
        task = op.task
        assert task is not None
        if op.in_flight is not None and op.in_flight[1].done():
            op.in_flight = None  # cancelled by its operation (a timeout of its own), or answered
        if task.done():
            return self._done(run, op)
        while op.in_flight is None and op.queue:
            words, fut = op.queue.popleft()
            if not fut.done():
                op.in_flight = (words, fut)
        deadline = loop.owner_deadline_ns(op.id)
        if op.in_flight is not None:
            answer: dict[str, Any] = {"command": redis_shim.words_json(op.in_flight[0])}
            if deadline is not None:
                answer["timeout_at"] = max(deadline, self.clock.now_ns)
            return answer
        if deadline is not None:
            return {"wait_until": max(deadline, self.clock.now_ns)}
        raise ProtocolError(
            f"{op.kind} of {op.token}: the client waits on neither a Redis reply nor a timer of its own, so "
            f"nothing admitsim sends could wake it (does it wait on another task, or on a lock another "
            f"operation holds?)")

    def _done(self, run: _Run, op: _Op) -> dict[str, Any]:
        task = op.task
        assert task is not None and task.done()
        del run.ops[op.id]
        if task.cancelled():
            raise ProtocolError(f"{op.kind} of {op.token}: the client's task was cancelled")
        exc = task.exception()
        if op.kind == "acquire":
            if exc is None:
                value = task.result()
                if not value:
                    return {"done": "acquire_timeout"}
                run.holds[op.token] = value
                if type(value) is int and value >= 1:
                    return {"done": "granted", "value": value}
                return {"done": "granted"}
            if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
                return {"done": "acquire_timeout"}
            if not isinstance(exc, redis_shim.RedisError):
                self._trace(exc)
            return {"done": "unreachable"}
        if op.kind == "release":
            if exc is None:
                return {"done": "released"}
            if isinstance(exc, (redis_shim.ConnectionError, redis_shim.TimeoutError)):
                return {"done": "lost"}
            if not isinstance(exc, redis_shim.RedisError):
                self._trace(exc)
            return {"done": "unreachable"}
        raise ProtocolError(f"{op.kind}: not an operation of this adapter")

    def _run_for(self, run: _Run, op: _Op, *, fire: bool) -> None:
        loop = run.loop
        loop.unhold(op.id)
        loop.run_until_quiet(acting_for=op.id, fire_owned=op.id if fire else None)

    # -- requests ----------------------------------------------------------------

    def _start(self, req: dict) -> dict[str, Any]:
        protocol = _int_field(req, "protocol")
        if protocol != PROTOCOL_VERSION:
            raise ProtocolError(f"start: protocol {protocol} is not supported (this adapter speaks {PROTOCOL_VERSION})")
        if req.get("role") != "lease_client":
            raise ProtocolError(f"start: this adapter runs a lease client, not {req.get('role')!r} "
                                "(a FIFO gate runs under admitsim_fifo.py)")
        seed = _int_field(req, "seed")
        worker = _int_field(req, "worker", minimum=0)
        generation = _int_field(req, "generation", minimum=0)
        now = _int_field(req, "now", minimum=0)
        wall_ms = _int_field(req, "wall_ms")
        raw = req.get("settings")
        if not isinstance(raw, dict):
            raise ProtocolError("start: missing field 'settings' (an object)")
        backoff = raw.get("backoff")
        if not isinstance(backoff, dict):
            raise ProtocolError("start: settings.backoff must be an object")
        settings = types.SimpleNamespace(
            key=raw.get("key"),
            limit=_int_field(raw, "limit", minimum=1),
            lease_ms=_int_field(raw, "lease_ms", minimum=1),
            acquire_timeout_s=_int_field(raw, "acquire_timeout_ms", minimum=0) / 1000,
            backoff=types.SimpleNamespace(
                kind=backoff.get("kind"),
                **{k[:-3] + "_s": v / 1000 for k, v in backoff.items() if k.endswith("_ms") and type(v) is int},
                **{k: v for k, v in backoff.items() if type(v) is bool}),
            worker=worker,
            generation=generation,
        )
        if not isinstance(settings.key, str):
            raise ProtocolError("start: settings.key must be a string")

        self._teardown()
        redis_shim.misuse.clear()
        random.seed(f"admitsim/{seed}/{worker}/{generation}")
        self.clock.now_ns = now
        self.clock.wall_offset_ns = wall_ms * 1_000_000 - now
        loop = VirtualLoop(self.clock, inherit_owner=True)
        redis = redis_shim.Redis()
        redis._bind(self._send)
        try:
            with loop.running():
                client = self.factory(redis, settings)
                if inspect.isawaitable(client):
                    helper = loop.create_task(_await(client), name="admitsim-start")
                    loop.run_until_quiet()
                    if not helper.done():
                        raise ProtocolError("start: the factory's awaitable did not finish at the start instant "
                                            "(a factory may not call Redis: no operation is open)")
                    client = helper.result()
                loop.run_until_quiet()
            hold = self.hold_name or ("hold" if callable(getattr(client, "hold", None)) else None)
            if hold is not None:
                if not callable(getattr(client, hold, None)):
                    raise ProtocolError(f"start: the client ({type(client).__name__}) has no method {hold}()")
                self._use_hold = True
                self._hold = hold
            else:
                for name in (self.acquire_name, self.release_name):
                    if not callable(getattr(client, name, None)):
                        raise ProtocolError(f"start: the client ({type(client).__name__}) has neither hold() nor "
                                            f"{name}()")
                self._use_hold = False
        except ProtocolError:
            loop.close()
            raise
        except Exception as exc:
            loop.close()
            self._trace(exc)
            return _error(f"start: the client factory raised {_describe(exc)}")
        self.run = _Run(loop, client, redis)
        return {"ok": True}

    def _stop(self, req: dict) -> dict[str, Any]:
        _int_field(req, "now", minimum=0)
        self._teardown()
        return {"ok": True}

    _wind_down_text = "admitsim_lease: stop: the client"

    def _new_op(self, req: dict, kind: str) -> tuple[_Run, _Op]:
        op_id = _int_field(req, "op", minimum=1)
        token = req.get("token")
        if not isinstance(token, str) or not token:
            raise ProtocolError(f"{kind}: field 'token' must be a non-empty string")
        run = self._advance(req)
        if op_id in run.ops:
            raise ProtocolError(f"{kind}: operation {op_id} is open already")
        op = _Op(op_id, kind, token)
        run.ops[op_id] = op
        return run, op

    def _acquire(self, req: dict) -> dict[str, Any]:
        run, op = self._new_op(req, "acquire")
        if op.token in run.holds:
            raise ProtocolError(f"acquire: token {op.token} is held already")
        client = run.client
        if self._use_hold:
            manager = getattr(client, self._hold)()

            async def enter() -> Any:
                await manager.__aenter__()
                return manager

            coro = enter()
        else:
            coro = _await(getattr(client, self.acquire_name)())
        give_token(op.token)
        try:
            op.task = run.loop.spawn(op.id, coro, name=f"admitsim-acquire-{op.token}")
            self._run_for(run, op, fire=False)
        finally:
            give_token(None)
        return self._step(run, op)

    def _release(self, req: dict) -> dict[str, Any]:
        run, op = self._new_op(req, "release")
        if op.token not in run.holds:
            raise ProtocolError(f"release: token {op.token} is not held (no acquire granted it)")
        held = run.holds.pop(op.token)
        if self._use_hold:
            coro = held.__aexit__(None, None, None)
        else:
            coro = _await_maybe(getattr(run.client, self.release_name), held)
        op.task = run.loop.spawn(op.id, coro, name=f"admitsim-release-{op.token}")
        self._run_for(run, op, fire=False)
        return self._step(run, op)

    def _op(self, req: dict) -> tuple[_Run, _Op]:
        op_id = _int_field(req, "op", minimum=1)
        run = self._advance(req)
        op = run.ops.get(op_id)
        if op is None:
            raise ProtocolError(f"{req['type']}: operation {op_id} is not open")
        return run, op

    def _reply(self, req: dict) -> dict[str, Any]:
        run, op = self._op(req)
        if op.in_flight is None:
            raise ProtocolError(f"reply: operation {op.id} has no command in flight")
        _, fut = op.in_flight
        op.in_flight = None
        if req["type"] == "lost":
            if not fut.done():
                fut.set_exception(redis_shim.ConnectionError("admitsim: the call's reply never came "
                                                             "(it may or may not have run)"))
        else:
            try:
                value = redis_shim.reply_value(req.get("reply"))
            except ValueError as exc:
                raise ProtocolError(f"reply: {exc}") from None
            if not fut.done():
                if isinstance(value, redis_shim.RedisError):
                    fut.set_exception(value)
                else:
                    fut.set_result(value)
        self._run_for(run, op, fire=False)
        return self._step(run, op)

    def _woke(self, req: dict) -> dict[str, Any]:
        run, op = self._op(req)
        self._run_for(run, op, fire=True)
        if op.in_flight is not None and not op.in_flight[1].done():
            # admitsim gave up on the reply at the operation's timer, which did not cancel the call: it ends
            # as the client's socket timeout would end it.
            _, fut = op.in_flight
            op.in_flight = None
            fut.set_exception(redis_shim.TimeoutError("admitsim: no reply by the operation's own timer"))
            self._run_for(run, op, fire=False)
        return self._step(run, op)

    def _run_ahead(self, req: dict, answer: dict[str, Any], ahead: Any) -> dict[str, Any]:
        """A wait within admitsim's promise, answered with the step after it.

        ``ahead`` promises that until ``until`` (without it: as long as
        ``t + wall_base`` fits a signed 64-bit integer) nothing reaches this worker but
        the operation's own timer, and that its wall clock reads
        ``(t + wall_base) // 1e6`` ms at any instant t up to then. So a wait
        until T <= until is followed by exactly the wake-up at T: it runs now,
        as a ``woke`` at T would run it, and its step goes with the wait
        (``{"wait_until": T, "then": STEP}``); admitsim sends no ``woke`` for it.
        An error found on the way is this request's answer.
        """
        if not isinstance(ahead, dict):
            raise ProtocolError(f"{req.get('type')}: field 'ahead' must be an object")
        base = _int_field(ahead, "wall_base", minimum=0)
        until = _int_field(ahead, "until", minimum=0) if "until" in ahead else _INT64_MAX - base
        if len(answer) != 1 or "wait_until" not in answer:
            return answer
        at = answer["wait_until"]
        run = self.run
        assert run is not None
        op = run.ops.get(req.get("op"))
        if at > until or op is None or len(run.ops) != 1 or op.in_flight is not None or op.queue:
            return answer
        then = self._woke({"type": "woke", "op": op.id, "now": at, "wall_ms": (at + base) // 1_000_000})
        return {"wait_until": at, "then": then}

    _HANDLERS: dict[str, Callable[["LeaseDriver", dict], dict[str, Any]]] = {
        "start": _start,
        "stop": _stop,
        "acquire": _acquire,
        "release": _release,
        "reply": _reply,
        "lost": _reply,
        "woke": _woke,
    }


async def _await_maybe(fn: Callable[..., Any], *args: Any) -> Any:
    result = fn(*args)
    if inspect.isawaitable(result):
        return await result
    return result
