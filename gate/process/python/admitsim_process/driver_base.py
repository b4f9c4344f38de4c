"""What the adapter's drivers share (fifo_driver, lease_driver).

``SteppedDriver`` keeps the driver's virtual clock and its open run (which
has a ``loop``), answers ``handle(request)`` with the process on that clock,
and, inside ``serving()`` (``serve`` runs in one), keeps the open run's loop
the thread's running loop between requests, as a production loop stays
running between its events. A subclass gives ``_handle(request)``; ``_teardown()``
closes the open run. The helpers read request fields strictly and shape errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import traceback
from typing import Any, Iterator

from .vloop import VirtualClock, virtual_process

__all__ = ["MAX_ERROR_TEXT", "ProtocolError", "SteppedDriver", "describe", "error", "int_field"]

MAX_ERROR_TEXT = 4000
_MISSING = object()


class ProtocolError(Exception):
    """A request that does not fit the protocol; answered with {"error": ...}."""


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def error(text: str) -> dict[str, Any]:
    if len(text) > MAX_ERROR_TEXT:
        text = text[: MAX_ERROR_TEXT - 3] + "..."
    return {"error": text}


def int_field(req: dict, key: str, *, minimum: int | None = None) -> int:
    """``req[key]``, an integer (not a bool) of at least ``minimum``; else ProtocolError."""
    value = req.get(key, _MISSING)
    if type(value) is int and (minimum is None or value >= minimum):
        return value
    if value is _MISSING:
        raise ProtocolError(f"{req.get('type')}: missing field {key!r}")
    if type(value) is not int:
        raise ProtocolError(f"{req.get('type')}: field {key!r} must be an integer, got {value!r}")
    raise ProtocolError(f"{req.get('type')}: field {key!r} must be >= {minimum}, got {value}")


class SteppedDriver:
    """The clock, the open run and the serving block of a driver (see the module doc)."""

    def __init__(self, log: Any = None) -> None:
        self.clock = VirtualClock()
        self.run: Any = None
        self.log = log if log is not None else sys.stderr
        self._serving = False
        self._kept: Any = None      # the open run's loop.running() block, kept open by serving()

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one request (a parsed JSON value); never raises an Exception."""
        if self._serving:       # serving() keeps the process on the driver's clock
            return self._handle(request)
        with virtual_process(self.clock):
            return self._handle(request)

    def _handle(self, request: Any) -> dict[str, Any]:
        raise NotImplementedError

    # How a wind-down that raised is reported: "admitsim_fifo: stop: the gate", say.
    _wind_down_text = "admitsim: stop: the code under test"

    def _cancelled_first(self, run: Any) -> list:
        """The tasks the teardown cancels first, in order (then every other task of the loop)."""
        return []

    def _teardown(self) -> None:
        """Close the open run, if any: every task cancelled, the loop run until quiet, then closed."""
        self._let_go()
        run, self.run = self.run, None
        if run is None:
            return
        loop = run.loop
        try:
            loop.stop_holding()
            with loop.running():
                for task in self._cancelled_first(run):
                    if not task.done():
                        task.cancel()
                for task in asyncio.all_tasks(loop):
                    task.cancel()
            loop.run_until_quiet()
        except Exception as exc:
            print(f"{self._wind_down_text} did not wind down cleanly: {describe(exc)}", file=self.log)
        finally:
            loop.close()

    def close(self) -> None:
        """Tear down an open run, if any."""
        with virtual_process(self.clock):
            self._teardown()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """A block in which the driver has the thread to itself (``serve`` runs
        in one): between requests, too, the process stays on the driver's
        clock and the open run's loop stays the thread's running loop (as a
        production loop stays running between its events), rather than each
        request setting them up and undoing them. A ``handle`` outside such a
        block leaves the process and the thread as it found them."""
        if self._serving:
            raise RuntimeError("the driver is serving already")
        with virtual_process(self.clock):
            self._serving = True
            try:
                yield
            finally:
                self._serving = False
                self._let_go()

    def _keep_running(self) -> None:
        """Make the open run's loop the running loop until ``_let_go``."""
        if self._kept is None and self.run is not None:
            kept = self.run.loop.running()
            kept.__enter__()
            self._kept = kept

    def _let_go(self) -> None:
        """End the kept running block, if any (a running loop cannot close)."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept.__exit__(None, None, None)

    def _trace(self, exc: BaseException) -> None:
        try:
            traceback.print_exception(exc, file=self.log)
            self.log.flush()
        except Exception:
            pass
