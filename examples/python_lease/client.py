"""An example fleet lease client, written the way a Python team writes one.

One sorted set at the gate's key holds a member per permit, scored by the
caller's wall-clock time when it was granted. An atomic script drops the
members older than a lease and adds the caller's token while fewer than the
limit remain; the client polls it with a fixed pause until its acquire
timeout, and gives the permit back with ZREM in a ``finally``.

admitsim runs this file unmodified through its Python adapter
(gate/process/python/admitsim_lease.py): ``redis.asyncio`` there is the
adapter's client, ``time`` and ``uuid`` read admitsim's virtual clocks and
draws, and every Redis call goes through admitsim's simulated network to
its Redis replica. ``make_gate(redis, settings)`` is the factory the
adapter calls.

Its weakness is the seed document's: ``now`` is the caller's own clock, so a
worker whose clock runs ahead reaps the permits of holders still at work.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from typing import AsyncIterator

import redis.asyncio as redis

# KEYS[1] the permits; ARGV now_ms, lease_ms, limit, token. 1: granted, 0: full.
TAKE_PERMIT = """
local permits = KEYS[1]
local now_ms = tonumber(ARGV[1])
local oldest_live = now_ms - tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', permits, '-inf', oldest_live)
local held = redis.call('ZCARD', permits)
if held >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', permits, now_ms, ARGV[4])
return 1
"""


@dataclass(frozen=True)
class LeaseSettings:
    key: str = "fleet:permits"
    limit: int = 4
    lease_ms: int = 15_000
    pause_s: float = 0.2
    give_up_after_s: float = 30.0


class FleetGate:
    """A counting semaphore shared by every worker of the fleet, in Redis."""

    def __init__(self, client: redis.Redis, settings: LeaseSettings) -> None:
        self._redis = client
        self._settings = settings
        self._take = client.register_script(TAKE_PERMIT)

    async def _try_take(self, token: str) -> bool:
        s = self._settings
        now_ms = int(time.time() * 1000)
        answer = await self._take(keys=[s.key], args=[now_ms, s.lease_ms, s.limit, token])
        return answer == 1

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[str]:
        """Wait for a permit (TimeoutError past the budget), hold it for the block, give it back."""
        token = uuid.uuid4().hex
        give_up_at = time.monotonic() + self._settings.give_up_after_s
        while not await self._try_take(token):
            if time.monotonic() >= give_up_at:
                raise TimeoutError("every permit stayed taken past the acquire budget")
            await asyncio.sleep(self._settings.pause_s)
        try:
            yield token
        finally:
            await self._redis.zrem(self._settings.key, token)


def make_gate(client: redis.Redis, settings) -> FleetGate:
    """The adapter's factory: the scenario's key, limit, lease, timeout and fixed backoff."""
    pause = getattr(settings.backoff, "delay_s", 0.2)
    return FleetGate(client, LeaseSettings(key=settings.key, limit=settings.limit, lease_ms=settings.lease_ms,
                                           pause_s=pause, give_up_after_s=settings.acquire_timeout_s))
