"""What the typed layer costs per call (PY-2), beside a hand-written floor.

The floor is the least any Python caller of the C ABI pays: one
`clarion_call` through ctypes with request bytes built once, the reply
decoded with `json.loads` and freed. The package builds the request from
keyword arguments, encodes it, maps the reply's code and returns the
body. Both run on one handle of the same library, alternately in batches,
and each run's ratio is printed, so a slow spell of the machine falls on
both sides.

    CLARION_DATABASE_URL=sqlite:///tmp/bench.db python python/bench/overhead.py
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable

from clarion import Clarion, User
from clarion import _native

RUNS = 7
CALLS = 2000


def floor_call(handle: int, request: bytes) -> Callable[[], object]:
    library = _native.lib()

    def call() -> object:
        pointer = library.clarion_call(handle, request)
        try:
            return json.loads(ctypes.string_at(pointer))
        finally:
            library.clarion_string_free(pointer)

    return call


def per_call_us(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        call()
    return (time.perf_counter() - started) / CALLS * 1e6


def main() -> None:
    url = os.environ["CLARION_DATABASE_URL"]
    tag = uuid.uuid4().hex[:8]
    with Clarion.open(url) as inbox:
        inbox.upsert_workspace(id=f"w-{tag}", owner_id="alice", name="Bench")
        inbox.upsert_task(id=f"t-{tag}", workspace_id=f"w-{tag}", title="Bench")
        inbox.upsert_session(id=f"s-{tag}", task_id=f"t-{tag}", is_primary=True)
        asked = inbox.ask(
            session_id=f"s-{tag}",
            questions=[
                {
                    "title": "T",
                    "prompt": "Go?",
                    "options": [{"label": "Yes", "description": "y"}, {"label": "No", "description": "n"}],
                }
            ],
        )
        alice = inbox.acting_as(User("alice"))
        pending_id = asked["pending_id"]
        request = {
            "op": "get_bundle",
            "principal": {"kind": "user", "user_id": "alice"},
            "args": {"pending_id": pending_id},
        }
        floor = floor_call(inbox._handle._handle, json.dumps(request).encode())

        def package() -> object:
            return alice.get_bundle(pending_id=pending_id)

        # The same work: the floor's body is the package's result.
        floor_reply = floor()
        assert isinstance(floor_reply, dict) and floor_reply["body"] == package()
        print(f"get_bundle as a user, {CALLS} calls per run, {url.split(':')[0]}, Python {sys.version.split()[0]}")
        print("run  floor us/call  package us/call  package/floor")
        ratios = []
        for run in range(1, RUNS + 1):
            floor_us = per_call_us(floor)
            package_us = per_call_us(package)
            ratios.append(package_us / floor_us)
            print(f"{run:>3}  {floor_us:>13.1f}  {package_us:>15.1f}  {ratios[-1]:>13.3f}")
        print(f"median package/floor: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
