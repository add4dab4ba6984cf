"""The blocking client: a handle, a principal, and every operation."""

from __future__ import annotations

import math
import threading
import time
from types import TracebackType
from typing import Any

from . import _native
from ._generated import Resolved, Waited, _Operations
from .errors import OpenError, TimedOut, from_reply, handle_closed
from .principals import Principal, System

#: A wait blocks in the library at most this long per call, so that Ctrl+C
#: and cancellation end it within a slice (PY-3).
SLICE_MS = 1000
#: WIRE-5's default and cap for `timeout_ms`.
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000


class _Handle:
    """One open library handle, shared by a client and its `acting_as` views."""

    def __init__(self, handle: int) -> None:
        self._handle = handle
        self._lock = threading.Lock()
        self.closed = False

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.closed:
            raise handle_closed()
        # A close racing this call is safe: the library's handle is a number
        # it never reuses, and a closed one answers 503 handle_closed.
        return _native.call(self._handle, request)

    def close(self) -> None:
        with self._lock:
            if self.closed:
                return
            self.closed = True
        _native.close(self._handle)


class _WaitPlan:
    """The slices of one wait: at most SLICE_MS each until the caller's own
    timeout has elapsed; then one last call with `final_timeout_ms`."""

    def __init__(self, timeout_ms: int | None) -> None:
        total = DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms
        valid = isinstance(total, int) and not isinstance(total, bool) and total >= 0
        # An invalid timeout goes to the library as given, for its 400 naming it.
        self.final_timeout_ms: Any = 0 if valid else total
        millis = min(total, MAX_TIMEOUT_MS) if valid else 0
        self._end = time.monotonic() + millis / 1000

    def next_slice(self) -> int | None:
        remaining = math.ceil((self._end - time.monotonic()) * 1000)
        return None if remaining <= 0 else min(SLICE_MS, remaining)


def open_handle(
    database_url: str,
    pool_size: int | None,
    public_url: str | None,
    sweep_ms: int | None,
) -> _Handle:
    config: dict[str, Any] = {"database_url": database_url}
    for key, value in (("pool_size", pool_size), ("public_url", public_url), ("sweep_ms", sweep_ms)):
        if value is not None:
            config[key] = value
    handle = _native.open_handle(config)
    if not handle:
        raise OpenError(_native.last_error() or "clarion_open failed")
    return _Handle(handle)


class Clarion(_Operations):
    """An open clarion database. Every operation is a method taking keyword
    arguments, acting as `principal` (`System()` for `Clarion.open`'s).

    Safe to share between threads. `close()` (or leaving a `with` block)
    closes the handle for this client and every `acting_as` view of it;
    calls then raise `HandleClosed`, including waits blocked in other
    threads.
    """

    def __init__(self, handle: _Handle, principal: Principal) -> None:
        self._handle = handle
        self._principal = principal

    @classmethod
    def open(
        cls,
        database_url: str,
        *,
        pool_size: int | None = None,
        public_url: str | None = None,
        sweep_ms: int | None = None,
    ) -> Clarion:
        """Opens (and migrates) a database: `sqlite:///path/to/file.db`,
        `postgres://...`. `pool_size`: connections; `public_url`: the base of
        answer links; `sweep_ms`: run deadlines and reminders every that many
        milliseconds. Raises `OpenError`."""
        return cls(open_handle(database_url, pool_size, public_url, sweep_ms), System())

    @property
    def principal(self) -> Principal:
        return self._principal

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def acting_as(self, principal: Principal) -> Clarion:
        """The same handle, acting as `principal`."""
        return Clarion(self._handle, principal)

    def close(self) -> None:
        """Closes the handle; closing twice does nothing."""
        self._handle.close()

    def __enter__(self) -> Clarion:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<Clarion {state} as {self._principal!r}>"

    def _call(self, op: str, args: dict[str, Any]) -> Any:
        reply = self._handle.call({"op": op, "principal": self._principal.to_wire(), "args": args})
        status = int(reply["status"])
        if 200 <= status < 300:
            return reply["body"]
        raise from_reply(reply)

    def wait(
        self,
        *,
        pending_id: str,
        timeout_ms: int | None = None,
        detach_on_timeout: bool | None = None,
    ) -> Waited:
        """The asking agent's wait: how it ended and, for a resolution, the
        response. Blocks in slices of at most a second that never detach, so
        Ctrl+C ends it within a slice and leaves the bundle attached; when
        `timeout_ms` (default 30000) elapses, one last check returns
        `timed_out` and detaches the bundle (unless `detach_on_timeout` is
        False): its answer then reaches the host's outbox."""
        plan = _WaitPlan(timeout_ms)
        while (slice_ms := plan.next_slice()) is not None:
            waited: Waited = self._call(
                "wait", {"pending_id": pending_id, "timeout_ms": slice_ms, "detach_on_timeout": False}
            )
            if waited["outcome"] != "timed_out":
                return waited
        final: dict[str, Any] = {"pending_id": pending_id, "timeout_ms": plan.final_timeout_ms}
        if detach_on_timeout is not None:
            final["detach_on_timeout"] = detach_on_timeout
        last: Waited = self._call("wait", final)
        return last

    def wait_bundle(self, *, pending_id: str, timeout_ms: int | None = None) -> Resolved:
        """Waits for the bundle's resolution, in slices of at most a second;
        raises `TimedOut` when `timeout_ms` (default 30000) passes first and
        `NoLongerActive` if it stops being active without one."""
        plan = _WaitPlan(timeout_ms)
        while (slice_ms := plan.next_slice()) is not None:
            try:
                resolved: Resolved = self._call("wait_bundle", {"pending_id": pending_id, "timeout_ms": slice_ms})
                return resolved
            except TimedOut:
                continue
        last: Resolved = self._call("wait_bundle", {"pending_id": pending_id, "timeout_ms": plan.final_timeout_ms})
        return last
