"""A Redis client shaped like the common asyncio Python client, whose calls admitsim carries.

``Redis`` offers the methods a lease client uses, spelled as ``redis.asyncio.Redis``
spells them (``eval``, ``evalsha``, ``script_load``, ``register_script``,
``zadd``, ``zrem``, ``set``, ``get``, ...; ``execute_command`` for any other
command). Each call is a coroutine that hands its command to the adapter's
``sender`` (the lease driver, which passes it to admitsim as the operation's
next step) and waits for the reply admitsim sends back, on virtual time.

Arguments are encoded as that client does: ``bytes`` as they are, ``str`` as
UTF-8, ``int`` and ``float`` by their decimal text (``repr`` for a float); a
``bool`` or ``None`` argument raises ``DataError``. Replies come back as it
gives them with ``decode_responses=False`` (the default; with ``True`` a bulk
string is decoded as UTF-8): an integer as ``int``, a bulk string as
``bytes``, a nil as ``None``, an array as a ``list``, a status reply ``OK``
as ``True`` and any other status as its text (``str``), an error as a raised
``ResponseError`` (``NoScriptError`` for ``NOSCRIPT``). A call whose reply
admitsim reports lost (a partition, a restart, a paused server past the
client's patience) raises ``ConnectionError``: the call may or may not have
run on the server.

``install()`` puts this module in ``sys.modules`` as ``redis``, ``redis.asyncio``
and ``redis.exceptions``, so a client's ``import redis.asyncio as redis`` (and
``from redis.exceptions import ConnectionError``) finds it: no network
client's code runs under admitsim.
"""

from __future__ import annotations

import hashlib
import sys
import types
from typing import Any, Awaitable, Callable, Iterable, Sequence

__all__ = [
    "ConnectionError",
    "DataError",
    "NoScriptError",
    "NotOffered",
    "Redis",
    "RedisError",
    "ResponseError",
    "Script",
    "TimeoutError",
    "encode_arg",
    "install",
]


class RedisError(Exception):
    """The root of the client's errors."""


class ConnectionError(RedisError):  # noqa: A001 - the client's own name
    """The call's reply never came (admitsim reported it lost)."""


class TimeoutError(RedisError):  # noqa: A001 - the client's own name
    """The client's socket timeout (raised by admitsim's transport as a lost call)."""


class DataError(RedisError):
    """An argument the client cannot encode."""


class ResponseError(RedisError):
    """The server answered with an error."""


class NoScriptError(ResponseError):
    """EVALSHA of a script the server does not have."""


class NotOffered(AttributeError):
    """A method of the real client that this one does not offer (a pipeline, pub/sub, ...)."""


# What the client asked of this module that it cannot do under admitsim (a method it does not offer, a
# client object the adapter did not connect), in order. The lease driver answers the step after one with
# an error, so that a run is never judged on a client failing for want of the adapter's support, even
# when the client's own code catches the exception.
misuse: list[str] = []


def encode_arg(value: Any) -> bytes:
    """One argument as the client encodes it."""
    kind = type(value)
    if kind is str:
        return value.encode("utf-8")
    if kind is int:
        return int.__repr__(value).encode()
    if kind is bytes:
        return value
    return _encode_other(value)


def _encode_other(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, bool) or value is None:
        raise DataError(f"Invalid input of type: {type(value).__name__!r}. Convert to a bytes, string, int or float first.")
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, float):
        return repr(value).encode()
    if isinstance(value, str):
        return value.encode("utf-8")
    raise DataError(f"Invalid input of type: {type(value).__name__!r}. Convert to a bytes, string, int or float first.")


# A sender takes the command's words and returns an awaitable of the decoded reply.
Sender = Callable[[list[bytes]], Awaitable[Any]]


class Script:
    """``Redis.register_script(body)``: EVALSHA by the body's SHA-1, loading it on NOSCRIPT."""

    def __init__(self, registered_client: "Redis", script: str | bytes) -> None:
        self.registered_client = registered_client
        self.script = script
        body = script.encode("utf-8") if isinstance(script, str) else bytes(script)
        self.sha = hashlib.sha1(body).hexdigest()

    async def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = (), client: "Redis | None" = None) -> Any:
        client = client or self.registered_client
        keys = list(keys)
        args = list(args)
        try:
            return await client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            # As the client does: load the body (the server may have restarted without it), then again.
            self.sha = await client.script_load(self.script)
            return await client.evalsha(self.sha, len(keys), *keys, *args)


class Redis:
    """The client object. Constructor arguments of the real client are accepted and ignored,
    but ``decode_responses``; the adapter gives the factory an instance already connected."""

    def __init__(self, *args: Any, sender: Sender | None = None, decode_responses: bool = False, **kwargs: Any) -> None:
        self._sender = sender
        self.decode_responses = decode_responses

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> "Redis":
        raise RedisError("under admitsim the client is the one the adapter gives the factory; it opens no connection")

    def _bind(self, sender: Sender) -> None:
        self._sender = sender

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_sender", "decode_responses"):
            raise AttributeError(name)
        text = (f"the client used redis.{name}, which the adapter's Redis client does not offer "
                f"(use execute_command, or see docs/process-gate.md)")
        misuse.append(text)
        raise NotOffered(text)

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        if not args:
            raise DataError("execute_command needs a command")
        if self._sender is None:
            text = "the client called Redis on a client object it made itself; under admitsim only the one the " \
                   "factory was given is connected"
            misuse.append(text)
            raise ConnectionError(text)
        words = [encode_arg(a) for a in args]
        reply = await self._sender(words)
        return self._decode(reply, words[0].upper())

    def _decode(self, reply: Any, command: bytes) -> Any:
        if isinstance(reply, bytes) and self.decode_responses:
            return reply.decode("utf-8", errors="replace")
        if isinstance(reply, list):
            return [self._decode(r, command) for r in reply]
        return reply

    # -- scripts ---------------------------------------------------------------

    def register_script(self, script: str | bytes) -> Script:
        return Script(self, script)

    async def eval(self, script: str | bytes, numkeys: int, *keys_and_args: Any) -> Any:
        return await self.execute_command("EVAL", script, numkeys, *keys_and_args)

    async def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        return await self.execute_command("EVALSHA", sha, numkeys, *keys_and_args)

    async def script_load(self, script: str | bytes) -> str:
        sha = await self.execute_command("SCRIPT", "LOAD", script)
        return sha.decode() if isinstance(sha, bytes) else sha

    async def script_exists(self, *shas: str) -> list[bool]:
        return [bool(x) for x in await self.execute_command("SCRIPT", "EXISTS", *shas)]

    # -- keys and strings ---------------------------------------------------------

    async def get(self, name: Any) -> Any:
        return await self.execute_command("GET", name)

    async def set(self, name: Any, value: Any, ex: Any = None, px: Any = None, nx: bool = False,
                  xx: bool = False, keepttl: bool = False, get: bool = False) -> Any:
        words: list[Any] = ["SET", name, value]
        if ex is not None:
            words += ["EX", _seconds(ex)]
        if px is not None:
            words += ["PX", _millis(px)]
        if nx:
            words.append("NX")
        if xx:
            words.append("XX")
        if keepttl:
            words.append("KEEPTTL")
        if get:
            words.append("GET")
        reply = await self.execute_command(*words)
        if get:
            return reply
        return True if reply is True else None

    async def delete(self, *names: Any) -> int:
        return await self.execute_command("DEL", *names)

    async def exists(self, *names: Any) -> int:
        return await self.execute_command("EXISTS", *names)

    async def incr(self, name: Any, amount: int = 1) -> int:
        return await self.execute_command("INCRBY", name, amount)

    incrby = incr

    async def decr(self, name: Any, amount: int = 1) -> int:
        return await self.execute_command("DECRBY", name, amount)

    decrby = decr

    async def expire(self, name: Any, time: Any) -> bool:
        return bool(await self.execute_command("EXPIRE", name, _seconds(time)))

    async def pexpire(self, name: Any, time: Any) -> bool:
        return bool(await self.execute_command("PEXPIRE", name, _millis(time)))

    async def ttl(self, name: Any) -> int:
        return await self.execute_command("TTL", name)

    async def pttl(self, name: Any) -> int:
        return await self.execute_command("PTTL", name)

    async def time(self) -> tuple[int, int]:
        seconds, micros = await self.execute_command("TIME")
        return int(seconds), int(micros)

    async def ping(self) -> bool:
        return (await self.execute_command("PING")) in (True, "PONG", b"PONG")

    # -- sorted sets ----------------------------------------------------------------

    async def zadd(self, name: Any, mapping: dict, nx: bool = False, xx: bool = False, ch: bool = False,
                   incr: bool = False, gt: bool = False, lt: bool = False) -> Any:
        words: list[Any] = ["ZADD", name]
        for flag, on in (("NX", nx), ("XX", xx), ("GT", gt), ("LT", lt), ("CH", ch), ("INCR", incr)):
            if on:
                words.append(flag)
        for member, score in mapping.items():
            words += [score, member]
        return await self.execute_command(*words)

    async def zrem(self, name: Any, *values: Any) -> int:
        return await self.execute_command("ZREM", name, *values)

    async def zcard(self, name: Any) -> int:
        return await self.execute_command("ZCARD", name)

    async def zcount(self, name: Any, min: Any, max: Any) -> int:  # noqa: A002 - the client's names
        return await self.execute_command("ZCOUNT", name, min, max)

    async def zscore(self, name: Any, value: Any) -> float | None:
        score = await self.execute_command("ZSCORE", name, value)
        return None if score is None else float(score)

    async def zrange(self, name: Any, start: int, end: int, withscores: bool = False) -> list:
        words: list[Any] = ["ZRANGE", name, start, end]
        if withscores:
            words.append("WITHSCORES")
        return _pairs(await self.execute_command(*words), withscores)

    async def zrangebyscore(self, name: Any, min: Any, max: Any, withscores: bool = False) -> list:  # noqa: A002
        words: list[Any] = ["ZRANGEBYSCORE", name, min, max]
        if withscores:
            words.append("WITHSCORES")
        return _pairs(await self.execute_command(*words), withscores)

    async def zremrangebyscore(self, name: Any, min: Any, max: Any) -> int:  # noqa: A002
        return await self.execute_command("ZREMRANGEBYSCORE", name, min, max)

    # -- hashes ---------------------------------------------------------------------

    async def hget(self, name: Any, key: Any) -> Any:
        return await self.execute_command("HGET", name, key)

    async def hset(self, name: Any, key: Any = None, value: Any = None, mapping: dict | None = None) -> int:
        words: list[Any] = ["HSET", name]
        if key is not None:
            words += [key, value]
        for k, v in (mapping or {}).items():
            words += [k, v]
        return await self.execute_command(*words)

    async def hdel(self, name: Any, *keys: Any) -> int:
        return await self.execute_command("HDEL", name, *keys)

    async def hgetall(self, name: Any) -> dict:
        flat = await self.execute_command("HGETALL", name)
        return dict(zip(flat[0::2], flat[1::2]))

    # -- the connection ----------------------------------------------------------------

    async def close(self) -> None:
        return None

    aclose = close

    async def __aenter__(self) -> "Redis":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None


def _seconds(value: Any) -> int:
    seconds = getattr(value, "total_seconds", None)
    return int(seconds()) if seconds is not None else int(value)


def _millis(value: Any) -> int:
    seconds = getattr(value, "total_seconds", None)
    return int(seconds() * 1000) if seconds is not None else int(value)


def _pairs(flat: list, withscores: bool) -> list:
    if not withscores:
        return flat
    return [(flat[i], float(flat[i + 1])) for i in range(0, len(flat), 2)]


def install() -> None:
    """Make ``import redis``, ``redis.asyncio`` and ``redis.exceptions`` this module's."""
    this = sys.modules[__name__]
    top = types.ModuleType("redis")
    exceptions = types.ModuleType("redis.exceptions")
    asyncio_mod = types.ModuleType("redis.asyncio")
    for name in ("RedisError", "ConnectionError", "TimeoutError", "DataError", "ResponseError", "NoScriptError"):
        for module in (exceptions, top, asyncio_mod):  # redis.asyncio exports them too
            setattr(module, name, getattr(this, name))
    for name in ("Redis", "StrictRedis"):
        setattr(asyncio_mod, name, Redis)
        setattr(top, name, Redis)
    asyncio_mod.client = types.SimpleNamespace(Script=Script)
    top.asyncio = asyncio_mod
    top.exceptions = exceptions
    sys.modules["redis"] = top
    sys.modules["redis.asyncio"] = asyncio_mod
    sys.modules["redis.exceptions"] = exceptions


def reply_value(reply: Any) -> Any:
    """admitsim's JSON reply (docs/process-gate.md) as the client returns it (decode_responses=False);
    an error reply as the exception the client raises, returned (the caller raises it)."""
    if not isinstance(reply, dict) or len(reply) != 1:
        raise ValueError(f"a reply must be an object with one key, got {reply!r}")
    (kind, value), = reply.items()
    if kind == "int" and type(value) is int:
        return value
    if kind == "nil" and value is True:
        return None
    if kind == "bulk":
        return _bytes(value)
    if kind == "status":
        text = _bytes(value).decode("utf-8", errors="replace")
        return True if text == "OK" else text
    if kind == "error":
        text = _bytes(value).decode("utf-8", errors="replace")
        return NoScriptError(text) if text.startswith("NOSCRIPT") else ResponseError(text)
    if kind == "array" and isinstance(value, list):
        # An error inside an array comes back as the exception object, as the client leaves it.
        return [reply_value(r) for r in value]
    raise ValueError(f"a reply of an unknown shape: {reply!r}")


def _bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and set(value) == {"hex"} and isinstance(value["hex"], str):
        return bytes.fromhex(value["hex"])
    raise ValueError(f"a string must be text or {{\"hex\": ...}}, got {value!r}")


def words_json(words: Iterable[bytes]) -> list[Any]:
    """A command's words as the protocol carries them: text, or {"hex": ...} for bytes that are not UTF-8."""
    out: list[Any] = []
    for w in words:
        try:
            out.append(w.decode("utf-8"))
        except UnicodeDecodeError:
            out.append({"hex": w.hex()})
    return out

