"""PY-3: waits in slices that release the GIL and never detach until the
caller's own timeout; racing threads; asyncio cancellation; close during
waits."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from helpers import QUESTIONS, CallCounter, answers, wait_until

from clarion import Clarion, HandleClosed, System, User
from clarion.aio import AsyncClarion
from clarion.testing import Mirror

#: How soon a wait must end once it has reason to: one slice (1 s) and room
#: for a loaded machine, far below the 30-60 s the waits ask for, which is
#: what they would take without slices or wake-ups.
PROMPTLY = 5.0


def in_outbox(c: Clarion, pending_id: str) -> bool:
    """Whether the bundle's resolution is an outbox entry (it was detached).
    The outbox has no cursor: on a shared database, earlier runs' entries
    are acknowledged until this one shows or the outbox runs dry."""
    while True:
        deliveries = c.pending_deliveries(limit=200)["deliveries"]
        if any(d["pending_id"] == pending_id for d in deliveries):
            return True
        if len(deliveries) < 200:
            return False
        for delivery in deliveries:
            c.ack_delivery(pending_id=delivery["pending_id"])


def test_py_3_eight_threads_race_one_winner(c: Clarion, m: Mirror) -> None:
    pending_id = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    alice = c.acting_as(User(m.owner))
    barrier = threading.Barrier(8)
    results: list[Any] = [None] * 8

    def racer(n: int) -> None:
        barrier.wait()
        results[n] = alice.resolve_bundle(pending_id=pending_id, answers=answers(f"racer {n}"))

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [r for r in results if r["claimed"]]
    assert len(winners) == 1, results
    for result in results:
        assert result["status"] == "answered" and result["response"] == winners[0]["response"], result
    assert alice.get_bundle(pending_id=pending_id)["response"] == winners[0]["response"]


def test_py_3_wait_releases_the_gil(c: Clarion, m: Mirror) -> None:
    pending_id = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    stop = threading.Event()
    ticks: list[float] = []

    def count() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            if n % 1000 == 0:
                ticks.append(time.monotonic())

    counter = threading.Thread(target=count)
    counter.start()
    try:
        started = time.monotonic()
        waited = c.wait(pending_id=pending_id, timeout_ms=3000, detach_on_timeout=False)
        ended = time.monotonic()
    finally:
        stop.set()
        counter.join()
    assert waited == {"outcome": "timed_out", "response": None}
    assert ended - started >= 2.9
    during = [t for t in ticks if started <= t <= ended]
    assert len(during) > 100, len(during)
    # Progress in every second of the wait, not just between its slices.
    for k in range(3):
        window = (started + k, started + k + 1)
        assert any(window[0] <= t < window[1] for t in during), (k, len(during))


def test_py_3_only_the_callers_timeout_detaches(c: Clarion, m: Mirror) -> None:
    alice = c.acting_as(User(m.owner))
    kept = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    assert c.wait(pending_id=kept, timeout_ms=1200, detach_on_timeout=False)["outcome"] == "timed_out"
    alice.resolve_bundle(pending_id=kept, answers=answers())
    assert not in_outbox(c, kept), "a wait that keeps the bundle attached left it in the outbox"

    detached = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    assert c.wait(pending_id=detached, timeout_ms=1200) == {"outcome": "timed_out", "response": None}
    alice.resolve_bundle(pending_id=detached, answers=answers())
    assert in_outbox(c, detached), "the caller's own timeout detaches: the answer goes to the outbox"


def test_py_3_wait_wakes_on_an_answer_from_another_thread(c: Clarion, m: Mirror) -> None:
    pending_id = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    counter = CallCounter(c, "wait")
    out: list[Any] = []
    waiter = threading.Thread(target=lambda: out.append(c.wait(pending_id=pending_id, timeout_ms=30_000)))
    waiter.start()
    wait_until(lambda: counter.in_flight == 1, what="the wait to block")
    answered = time.monotonic()
    c.acting_as(User(m.owner)).resolve_bundle(pending_id=pending_id, answers=answers())
    waiter.join(10)
    assert not waiter.is_alive()
    assert time.monotonic() - answered < PROMPTLY
    assert out[0]["outcome"] == "answered"


async def _cancelled_wait(aio: AsyncClarion, pending_id: str, counter: CallCounter) -> float:
    task = asyncio.create_task(aio.wait(pending_id=pending_id, timeout_ms=60_000))
    deadline = time.monotonic() + 10
    while counter.in_flight == 0:
        assert not task.done(), task.result()
        assert time.monotonic() < deadline, "the wait never blocked"
        await asyncio.sleep(0.005)
    cancelled = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - cancelled


def test_py_3_asyncio_cancelled_wait_leaves_the_bundle_attached(database_url: str, m: Mirror) -> None:
    async def scenario() -> None:
        async with await AsyncClarion.open(database_url) as aio:
            pending_id = (await aio.ask(session_id=m.session_id, questions=QUESTIONS))["pending_id"]
            counter = CallCounter(aio.blocking, "wait")
            took = await _cancelled_wait(aio, pending_id, counter)
            assert took < PROMPTLY, took
            # The slice in flight ends on its worker thread without detaching.
            await asyncio.to_thread(wait_until, lambda: counter.in_flight == 0, 5.0, "the slice to end")
            assert (await aio.get_bundle(pending_id=pending_id))["status"] == "pending"
            await aio.acting_as(User(m.owner)).resolve_bundle(pending_id=pending_id, answers=answers())
            assert not await asyncio.to_thread(in_outbox, aio.blocking, pending_id)
            waited = await aio.wait(pending_id=pending_id, timeout_ms=1000)
            assert waited["outcome"] == "answered"

    asyncio.run(scenario())


def test_py_3_close_during_waits_raises_handle_closed(database_url: str, m: Mirror) -> None:
    handle = Clarion.open(database_url)
    pending_id = handle.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    views = [handle, handle.acting_as(System()), handle.acting_as(User(m.owner))]
    counters = [CallCounter(view, "wait" if i < 2 else "wait_bundle") for i, view in enumerate(views)]
    raised: list[BaseException | None] = [None] * 3

    def blocked(i: int) -> None:
        try:
            if i < 2:
                views[i].wait(pending_id=pending_id, timeout_ms=60_000)
            else:
                views[i].wait_bundle(pending_id=pending_id, timeout_ms=60_000)
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion
            raised[i] = error

    threads = [threading.Thread(target=blocked, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: all(counter.in_flight == 1 for counter in counters), what="three blocked waits")
        closing = time.monotonic()
    finally:
        handle.close()
    for thread in threads:
        thread.join(2 * PROMPTLY)
        assert not thread.is_alive()
    assert time.monotonic() - closing < PROMPTLY
    assert all(isinstance(error, HandleClosed) for error in raised), raised
    with pytest.raises(HandleClosed):
        views[2].get_bundle(pending_id=pending_id)


def test_py_3_ctrl_c_ends_a_wait_within_a_slice(c: Clarion, m: Mirror) -> None:
    """SIGINT reaches the main thread between slices: the wait ends within
    one and the bundle stays attached."""
    import _thread

    pending_id = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    counter = CallCounter(c, "wait")
    interrupted: list[float] = []

    def interrupt() -> None:
        wait_until(lambda: counter.in_flight == 1, what="the wait to block")
        interrupted.append(time.monotonic())
        _thread.interrupt_main()

    helper = threading.Thread(target=interrupt)
    helper.start()
    with pytest.raises(KeyboardInterrupt):
        c.wait(pending_id=pending_id, timeout_ms=60_000)
    took = time.monotonic() - interrupted[0]
    helper.join()
    assert took < PROMPTLY, took
    c.acting_as(User(m.owner)).resolve_bundle(pending_id=pending_id, answers=answers())
    assert not in_outbox(c, pending_id), "an interrupted wait detached the bundle"
