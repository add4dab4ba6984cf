"""clarion: a durable "ask a human" inbox for agents, over its C ABI.

    from clarion import Clarion, User

    with Clarion.open("sqlite:///tmp/clarion.db") as c:
        c.upsert_workspace(id="w", owner_id="alice", name="W")
        c.upsert_task(id="t", workspace_id="w", title="T")
        c.upsert_session(id="s", task_id="t")
        asked = c.ask(session_id="s", questions=[...])
        out = c.wait(pending_id=asked["pending_id"], timeout_ms=60000)

Results are TypedDicts (`clarion.types`); errors are `ClarionError`s chosen
by the reply's code; `clarion.aio.AsyncClarion` is the asyncio client and
`clarion.testing` a pytest plugin.
"""

from __future__ import annotations

from ._client import Clarion
from ._native import abi_version
from .errors import (
    AlreadyVoted,
    CapabilityDenied,
    ClarionError,
    Conflict,
    HandleClosed,
    Internal,
    LinkUsed,
    NoLongerActive,
    NotEligible,
    NotFound,
    OpenError,
    SessionEnded,
    TimedOut,
    Unavailable,
    ValidationError,
)
from .principals import Agent, Principal, System, Unclassified, User

__all__ = [
    "Agent",
    "AlreadyVoted",
    "CapabilityDenied",
    "Clarion",
    "ClarionError",
    "Conflict",
    "HandleClosed",
    "Internal",
    "LinkUsed",
    "NoLongerActive",
    "NotEligible",
    "NotFound",
    "OpenError",
    "Principal",
    "SessionEnded",
    "System",
    "TimedOut",
    "Unavailable",
    "Unclassified",
    "User",
    "ValidationError",
    "abi_version",
]
