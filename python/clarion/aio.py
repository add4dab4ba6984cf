"""clarion for asyncio: the same operations as coroutines.

Each library call runs on a worker thread (`asyncio.to_thread`), and waits
run in slices of at most a second, so cancelling an awaited `wait` returns
at once and leaves the bundle attached (the slice in flight finishes on its
thread and detaches nothing).
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from ._client import Clarion, _WaitPlan, open_handle
from ._generated import Resolved, Waited, _AsyncOperations
from .errors import TimedOut
from .principals import Principal, System


class AsyncClarion(_AsyncOperations):
    """An open clarion database for asyncio; see `clarion.Clarion`."""

    def __init__(self, client: Clarion) -> None:
        self._client = client

    @classmethod
    async def open(
        cls,
        database_url: str,
        *,
        pool_size: int | None = None,
        public_url: str | None = None,
        sweep_ms: int | None = None,
    ) -> AsyncClarion:
        """Opens (and migrates) a database; raises `OpenError`."""
        handle = await asyncio.to_thread(open_handle, database_url, pool_size, public_url, sweep_ms)
        return cls(Clarion(handle, System()))

    @property
    def blocking(self) -> Clarion:
        """The blocking client on the same handle and principal."""
        return self._client

    @property
    def principal(self) -> Principal:
        return self._client.principal

    @property
    def closed(self) -> bool:
        return self._client.closed

    def acting_as(self, principal: Principal) -> AsyncClarion:
        """The same handle, acting as `principal`."""
        return AsyncClarion(self._client.acting_as(principal))

    async def close(self) -> None:
        """Closes the handle (for every view of it); closing twice does nothing."""
        await asyncio.to_thread(self._client.close)

    async def __aenter__(self) -> AsyncClarion:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<AsyncClarion {state} as {self.principal!r}>"

    async def _acall(self, op: str, args: dict[str, Any]) -> Any:
        return await asyncio.to_thread(self._client._call, op, args)

    async def wait(
        self,
        *,
        pending_id: str,
        timeout_ms: int | None = None,
        detach_on_timeout: bool | None = None,
    ) -> Waited:
        """`Clarion.wait` as a coroutine; cancelling it leaves the bundle attached."""
        plan = _WaitPlan(timeout_ms)
        while (slice_ms := plan.next_slice()) is not None:
            waited: Waited = await self._acall(
                "wait", {"pending_id": pending_id, "timeout_ms": slice_ms, "detach_on_timeout": False}
            )
            if waited["outcome"] != "timed_out":
                return waited
        final: dict[str, Any] = {"pending_id": pending_id, "timeout_ms": plan.final_timeout_ms}
        if detach_on_timeout is not None:
            final["detach_on_timeout"] = detach_on_timeout
        last: Waited = await self._acall("wait", final)
        return last

    async def wait_bundle(self, *, pending_id: str, timeout_ms: int | None = None) -> Resolved:
        """`Clarion.wait_bundle` as a coroutine."""
        plan = _WaitPlan(timeout_ms)
        while (slice_ms := plan.next_slice()) is not None:
            try:
                resolved: Resolved = await self._acall(
                    "wait_bundle", {"pending_id": pending_id, "timeout_ms": slice_ms}
                )
                return resolved
            except TimedOut:
                continue
        last: Resolved = await self._acall(
            "wait_bundle", {"pending_id": pending_id, "timeout_ms": plan.final_timeout_ms}
        )
        return last


__all__ = ["AsyncClarion"]
