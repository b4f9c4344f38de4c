"""The protocol's requests (docs/process-gate.md) as the adapter's tests build them."""

MS = 1_000_000


def start(max_active=1, max_waiting=1, wait_ns=150 * MS, seed=7, now=0):
    return {"type": "start", "protocol": 1, "gate": "delay", "seed": seed,
            "config": {"max_active": max_active, "max_waiting": max_waiting, "wait_deadline_ns": wait_ns},
            "now": now}


def acquire(t, now):
    return {"type": "acquire", "ticket": t, "now": now}


def release(now):
    return {"type": "release", "now": now}


def claim(t, now):
    return {"type": "claim", "ticket": t, "now": now}


def expire(t, now):
    return {"type": "expire", "ticket": t, "now": now}


def cancel(t, now):
    return {"type": "cancel", "ticket": t, "now": now}


def stop(now):
    return {"type": "stop", "now": now}
