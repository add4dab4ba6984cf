"""Who an operation acts as: the principals of WIRE-5's request envelope."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class System:
    """The host itself: every operation, every bundle."""

    def to_wire(self) -> dict[str, Any]:
        return {"kind": "system"}


@dataclass(frozen=True)
class User:
    """A person, by the host's id."""

    user_id: str

    def to_wire(self) -> dict[str, Any]:
        return {"kind": "user", "user_id": self.user_id}


@dataclass(frozen=True)
class Agent:
    """An agent acting for a user, holding some of the grants
    `questions:read` and `questions:answer` (none if not given)."""

    user_id: str
    agent_id: str
    grants: Sequence[str] = field(default=())

    def __post_init__(self) -> None:
        # A tuple keeps the frozen principal hashable and unchanged by the
        # caller's later edits to its list.
        object.__setattr__(self, "grants", tuple(self.grants))

    def to_wire(self) -> dict[str, Any]:
        return {
            "kind": "agent",
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "grants": list(self.grants),
        }


@dataclass(frozen=True)
class Unclassified:
    """A caller of no known kind: refused everything."""

    def to_wire(self) -> dict[str, Any]:
        return {"kind": "unclassified"}


Principal = Union[System, User, Agent, Unclassified]

__all__ = ["Agent", "Principal", "System", "Unclassified", "User"]
