"""clarion's errors as exceptions, chosen by the reply's `code` alone (never
by its message text, which may change)."""

from __future__ import annotations

from typing import Any


class ClarionError(Exception):
    """Every error clarion reports. `status` is the WIRE-1 status, `code` the
    error's code word (`""` where the reply had none), `message` the body's
    `error`, `body` the whole error body, `field` a validation error's field
    path (else `""`)."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "",
        body: Any = None,
        field: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body: Any = body if body is not None else {"error": message}
        self.field = field

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, code={self.code!r}, message={self.message!r})"


class OpenError(ClarionError):
    """`Clarion.open` failed: a bad setting, URL or unreachable database."""


class NotFound(ClarionError):
    """An unknown entity, or one the principal may not see (404)."""


class CapabilityDenied(ClarionError):
    """The principal may not perform the operation at all (403)."""


class ValidationError(ClarionError):
    """An argument is invalid (400); `field` is its path, e.g.
    `questions[0].options`."""


class Conflict(ClarionError):
    """The request meets the bundle or session in a state that refuses it (409)."""


class NoLongerActive(Conflict):
    """The bundle stopped being active without a resolution."""


class AlreadyVoted(Conflict):
    """This person already voted on the quorum bundle."""


class SessionEnded(Conflict):
    """The session has ended: it asks nothing more."""


class LinkUsed(Conflict):
    """The answer link was already used (answer links are reached over HTTP)."""


class NotEligible(ClarionError):
    """The person sees the quorum bundle but is not among its voters (403)."""


class TimedOut(ClarionError):
    """`wait_bundle`'s timeout passed before a resolution (504)."""


class HandleClosed(ClarionError):
    """The handle was closed (503); it serves nothing more."""


class Unavailable(ClarionError):
    """The database is unavailable, read-only or full: try again later."""


class Internal(ClarionError):
    """An internal error; only a reference to the log leaves the library."""


#: The exception of each code word, one to one.
BY_CODE: dict[str, type[ClarionError]] = {
    "not_found": NotFound,
    "no_longer_active": NoLongerActive,
    "not_eligible": NotEligible,
    "already_voted": AlreadyVoted,
    "link_used": LinkUsed,
    "validation": ValidationError,
    "capability_denied": CapabilityDenied,
    "session_ended": SessionEnded,
    "unavailable": Unavailable,
    "timed_out": TimedOut,
    "handle_closed": HandleClosed,
    "internal": Internal,
}


def from_reply(reply: dict[str, Any]) -> ClarionError:
    """The exception for a non-2xx `clarion_call` reply; an unknown or
    missing code gives a plain `ClarionError`."""
    body = reply.get("body")
    message = body.get("error", "") if isinstance(body, dict) else ""
    code = reply.get("code") or ""
    cls = BY_CODE.get(code, ClarionError)
    return cls(
        str(message),
        status=int(reply.get("status", 0)),
        code=code,
        body=body,
        field=reply.get("field") or "",
    )


def handle_closed() -> HandleClosed:
    """What a call on a closed handle raises, without reaching the library."""
    return HandleClosed("handle closed", status=503, code="handle_closed", body={"error": "handle closed"})


__all__ = [
    "AlreadyVoted",
    "BY_CODE",
    "CapabilityDenied",
    "ClarionError",
    "Conflict",
    "HandleClosed",
    "Internal",
    "LinkUsed",
    "NoLongerActive",
    "NotEligible",
    "NotFound",
    "OpenError",
    "SessionEnded",
    "TimedOut",
    "Unavailable",
    "ValidationError",
]
