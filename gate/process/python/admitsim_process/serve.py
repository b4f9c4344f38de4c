"""The child process's side of the line protocol: load the user's gate, serve stdin.

``load_factory("path/to/gate.py:Gate")`` imports the file by path and returns the
named attribute. ``serve(driver, stdin, stdout)`` reads requests, one JSON
object per line (bytes, decoded as UTF-8), and writes exactly one answer line
per request (the bytes of ``json.dumps(answer, separators=(",", ":"))`` + ``\\n``,
flushed) until stdin closes. ``main(argv)`` is the command line of ``admitsim_fifo.py``.

The answers' stream is kept to the adapter alone: ``main`` duplicates file
descriptor 1 for the answers and points fd 1 and ``sys.stdout`` at stderr, so
whatever the user's code prints (from Python or below it) lands on stderr,
which admitsim keeps and shows when the child fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import traceback
from typing import Any, BinaryIO, Callable

from .fifo_driver import FifoDriver
from .vloop import VirtualClock, virtual_process

__all__ = ["UsageError", "encode_answer", "lease_main", "load_factory", "main", "run_child", "serve"]

USAGE_TAIL = """\
Serves admitsim's process-gate protocol (version 1, docs/process-gate.md) on
stdin/stdout: FILE.py is imported by path (relative to the working directory),
FACTORY(max_active, max_waiting, wait_seconds) makes the gate, whose async
acquire() and release() (sync or async) run unmodified on a virtual-time
asyncio loop whose clock is admitsim's."""


LEASE_USAGE_TAIL = """\
Serves admitsim's fleet-client protocol (version 1, docs/process-gate.md) on
stdin/stdout as one worker of the fleet: FILE.py is imported by path (relative
to the working directory), FACTORY(redis, settings) makes the client (redis: a
client shaped like redis.asyncio.Redis whose calls admitsim carries to its
simulated Redis; settings: the gate's key, limit, lease_ms, acquire_timeout_s
and backoff), whose hold() (an async context manager) or acquire()/release()
runs unmodified on a virtual-time asyncio loop with the worker's clocks."""


class UsageError(Exception):
    """Bad command line or a gate that cannot be loaded (exit status 2)."""


def _json_line(answer: dict[str, Any]) -> bytes:
    return (json.dumps(answer, separators=(",", ":")) + "\n").encode("utf-8")


def encode_answer(answer: dict[str, Any]) -> bytes:
    """One answer line: exactly the bytes of ``json.dumps(answer, separators=(",", ":"))``
    and ``\\n``.

    Answers are flat objects of a few shapes, so the common case is written
    here directly: keys and string values that are ASCII identifiers (which
    JSON writes as they are, quoted), plain ints, booleans and null. Anything
    else (an error's text, say) goes through ``json.dumps``.
    """
    words = answer.get("command")
    if words is not None:
        return _command_line(answer, words)
    then = answer.get("then")
    if then is not None:
        at = answer.get("wait_until")
        if len(answer) == 2 and next(iter(answer)) == "wait_until" and type(at) is int and type(then) is dict:
            return b'{"wait_until":' + int.__repr__(at).encode() + b',"then":' + encode_answer(then)[:-1] + b"}\n"
        return _json_line(answer)
    parts = []
    for key, value in answer.items():
        if type(key) is not str or not (key.isascii() and key.isidentifier()):
            return _json_line(answer)
        if value is None:
            parts.append(f'"{key}":null')
        elif value is True:
            parts.append(f'"{key}":true')
        elif value is False:
            parts.append(f'"{key}":false')
        elif type(value) is int:
            parts.append(f'"{key}":{int.__repr__(value)}')
        elif type(value) is str and value.isascii() and value.isidentifier():
            parts.append(f'"{key}":"{value}"')
        else:
            return _json_line(answer)
    return ("{" + ",".join(parts) + "}\n").encode()


# A string JSON writes as it is between quotes: printable ASCII but '"' and '\\'.
_PLAIN_TEXT = re.compile(r'[ !#-\[\]-~]*')


def _command_line(answer: dict[str, Any], words: Any) -> bytes:
    """A lease client's command step, {"command": [...]} (and "timeout_at"), written directly when
    every word is plain ASCII text; else by json.dumps. The same bytes either way."""
    timeout_at = answer.get("timeout_at")
    if (type(words) is not list or not words or len(answer) != (1 if timeout_at is None else 2)
            or (timeout_at is not None and type(timeout_at) is not int)):
        return _json_line(answer)
    for w in words:
        if type(w) is not str or _PLAIN_TEXT.fullmatch(w) is None:
            return _json_line(answer)
    line = '{"command":["' + '","'.join(words) + '"]'
    if timeout_at is not None:
        line += ',"timeout_at":' + int.__repr__(timeout_at)
    return (line + "}\n").encode()


# The requests other than start, exactly as admitsim writes them (compact, in
# this key order, tickets and times as plain JSON integers of at most 30
# digits). Such a line is read by this pattern into the dict json.loads would
# give; every other line, start included, goes to json.loads.
_PLAIN_REQUEST = re.compile(
    rb'\{"type":"(acquire|release|claim|expire|cancel|stop)"'
    rb'(?:,"ticket":(0|[1-9][0-9]{0,29}))?,"now":(0|[1-9][0-9]{0,29})\}')


# A lease client's requests as admitsim writes them (compact, in this key order): a wake-up or a lost
# call, and a reply that is an integer or a plain bulk string; each maybe with the promise "ahead".
_LEASE_STEP = re.compile(
    rb'\{"type":"(woke|lost|reply)","op":([1-9][0-9]{0,18}),"now":(0|[1-9][0-9]{0,18}),'
    rb'"wall_ms":(-?(?:0|[1-9][0-9]{0,18}))'
    rb'(?:,"reply":\{"(?:int":(-?(?:0|[1-9][0-9]{0,18}))|bulk":"([ !#-\[\]-~]*)")\})?'
    rb'(?:,"ahead":\{(?:"until":(0|[1-9][0-9]{0,18}),)?"wall_base":(0|[1-9][0-9]{0,18})\})?\}')


def decode_request(line: bytes) -> Any:
    """The request of one line; ValueError when the line is not UTF-8 JSON."""
    step = _LEASE_STEP.fullmatch(line)
    if step is not None:
        kind, op, now, wall, integer, bulk, until, base = step.groups()
        request = {"type": kind.decode(), "op": int(op), "now": int(now), "wall_ms": int(wall)}
        if integer is not None:
            request["reply"] = {"int": int(integer)}
        elif bulk is not None:
            request["reply"] = {"bulk": bulk.decode()}
        if base is not None:
            request["ahead"] = {"until": int(until), "wall_base": int(base)} if until is not None else \
                {"wall_base": int(base)}
        if (kind == b"reply") == ("reply" in request):
            return request
    plain = _PLAIN_REQUEST.fullmatch(line)
    if plain is not None:
        kind, ticket, now = plain.groups()
        if ticket is None:
            return {"type": kind.decode(), "now": int(now)}
        return {"type": kind.decode(), "ticket": int(ticket), "now": int(now)}
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"a request line is not JSON: {exc}") from None


def load_factory(spec: str) -> Callable[..., Any]:
    """Import ``FILE.py`` (by path) and return its attribute ``FACTORY``."""
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:FACTORY, got {spec!r}")
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise UsageError(f"{path}: no such file")
    stem = os.path.splitext(os.path.basename(full))[0]
    module_name = stem if stem.isidentifier() and stem not in sys.modules else "admitsim_user_gate"
    module_spec = importlib.util.spec_from_file_location(module_name, full)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    # The gate's own folder comes after the adapter's, so a gate can import
    # its neighbours as a script would.
    folder = os.path.dirname(full)
    if folder not in sys.path:
        sys.path.insert(1, folder)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(module_name, None)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise UsageError(f"{path}: importing it raised {type(exc).__name__}: {exc}") from exc
    factory = getattr(module, name, None)
    if factory is None:
        raise UsageError(f"{path} has no attribute {name!r}")
    if not callable(factory):
        raise UsageError(f"{path}: {name} is not callable")
    return factory


def serve(driver: Any, stdin: BinaryIO, stdout: BinaryIO) -> None:
    """Answer every line of ``stdin`` on ``stdout`` until stdin closes.

    The driver is ``serving()`` all along: nothing else runs in the thread
    between requests, so its run's loop stays the running loop throughout.
    """
    try:
        with driver.serving():
            while True:
                line = stdin.readline()
                if not line:
                    break
                try:
                    request = decode_request(line.rstrip(b"\r\n"))
                except ValueError as exc:
                    answer = {"error": str(exc)}
                else:
                    answer = driver.handle(request)
                stdout.write(encode_answer(answer))
                stdout.flush()
    finally:
        driver.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="admitsim_fifo.py",
        description="Run an asyncio FIFO gate as admitsim's child process, on virtual time.",
        epilog=USAGE_TAIL,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--acquire", metavar="NAME", default="acquire",
                        help="the gate's async acquire method (default: acquire)")
    parser.add_argument("--release", metavar="NAME", default="release",
                        help="the gate's release method, sync or async (default: release)")
    parser.add_argument("target", metavar="FILE.py:FACTORY",
                        help="the file to import and the factory in it, "
                             "called as FACTORY(max_active, max_waiting, wait_seconds)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)  # exits 2 with the usage on stderr when wrong
    for name in (args.acquire, args.release):
        if not name.isidentifier():
            parser.error(f"{name!r} is not a method name")
    return run_child("admitsim_fifo.py", args.target,
                     lambda factory: FifoDriver(factory, acquire_name=args.acquire, release_name=args.release))


def lease_main(argv: list[str] | None = None) -> int:
    """The command line of ``admitsim_lease.py``: a fleet worker's lease client."""
    parser = argparse.ArgumentParser(
        prog="admitsim_lease.py",
        description="Run an asyncio lease client as one admitsim fleet worker's child process, on virtual time.",
        epilog=LEASE_USAGE_TAIL,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--hold", metavar="NAME", default=None,
                        help="the client's async context manager method (default: hold, when it has one)")
    parser.add_argument("--acquire", metavar="NAME", default="acquire",
                        help="without hold(): the client's async acquire method (default: acquire)")
    parser.add_argument("--release", metavar="NAME", default="release",
                        help="without hold(): its release method, given what acquire returned (default: release)")
    parser.add_argument("target", metavar="FILE.py:FACTORY",
                        help="the file to import and the factory in it, called as FACTORY(redis, settings)")
    args = parser.parse_args(argv)
    for name in (args.hold, args.acquire, args.release):
        if name is not None and not name.isidentifier():
            parser.error(f"{name!r} is not a method name")
    from . import redis_shim
    from .lease_driver import LeaseDriver
    redis_shim.install()  # the client's `import redis.asyncio` finds the adapter's client
    return run_child("admitsim_lease.py", args.target,
                     lambda factory: LeaseDriver(factory, hold_name=args.hold, acquire_name=args.acquire,
                                                 release_name=args.release))


def run_child(prog: str, target: str, make_driver: Callable[[Callable[..., Any]], Any]) -> int:
    """Load ``target`` once (exit 2 when it cannot be), then serve stdin with the driver made for it."""
    # Answers go to a private copy of fd 1; fd 1 and sys.stdout become stderr.
    sys.stdout.flush()
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    answers = os.fdopen(answer_fd, "wb")
    sys.stdout = sys.stderr

    try:
        # Module-level code of the user's file sees virtual time 0.
        with virtual_process(VirtualClock(0)):
            # The modules loaded before the user's file: what every run shares.
            baseline = set(sys.modules)
            try:
                load_factory(target)  # refused here, once, with exit 2
            except UsageError as exc:
                if exc.__cause__ is not None:
                    traceback.print_exception(exc.__cause__, file=sys.stderr)
                print(f"{prog}: error: {exc}", file=sys.stderr)
                return 2

            def fresh_factory(*config: Any) -> Any:
                # admitsim reuses a child for run after run (a start each): every start imports the
                # user's file, and whatever it imported, anew, so no module-level state of the user's
                # code carries from one run to the next and a seed's answers never depend on which
                # runs the child served before.
                for name in [m for m in sys.modules if m not in baseline]:
                    del sys.modules[name]
                return load_factory(target)(*config)

            serve(make_driver(fresh_factory), sys.stdin.buffer, answers)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        try:
            answers.close()
        except OSError:
            pass
    return 0
