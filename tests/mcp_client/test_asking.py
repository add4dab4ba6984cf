"""`clarion mcp --ask-in` under the official Python MCP client (PyPI `mcp`),
over stdio (MCPA-2). Run by tests/it/mcp_asking.rs on both backends:

    CLARION_BIN=target/debug/clarion CLARION_DATABASE_URL=... \
    CLARION_SESSION=... python tests/mcp_client/test_asking.py <scenario>

The agent's side of each scenario; the human's side is the Rust test. A
line `PENDING <id>` tells it a bundle is waiting; the script then waits
for a line on stdin before it goes on. The last line is `RESULT <json>`.
"""

import asyncio
import json
import os
import sys
import time

import anyio

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from clarion_mcp import error_of, server, structured

SESSION = os.environ["CLARION_SESSION"]
# More of `clarion mcp`'s arguments, e.g. `--task t --workspace w --owner u`.
MIRROR = os.environ.get("CLARION_MIRROR", "").split()

QUESTIONS = [{
    "title": "Ship it?",
    "prompt": "Tests pass. Ship it?",
    "options": [{"label": "Yes", "description": "ship"}, {"label": "No", "description": "wait"}],
}]


def said(line):
    print(line, flush=True)


async def go_on():
    """Waits for the human's side to say it acted."""
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


async def ok(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    assert result.is_error is False, result
    body = structured(result)
    assert list(body)[0] == "pending_id", body
    return body


async def refused(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    return error_of(result)


async def answered(session):
    """ask_human returns the human's answer."""
    return await ok(session, "ask_human", {"questions": QUESTIONS, "wait_ms": 40000})


async def pending_then_wait(session):
    """ask_human ends pending; wait_for_answer returns the answer."""
    first = await ok(session, "ask_human", {"questions": QUESTIONS, "wait_ms": 0})
    assert first["status"] == "pending" and first["retry_after_ms"] == 0, first
    assert list(first) == ["pending_id", "status", "retry_after_ms"], first
    said(f"PENDING {first['pending_id']}")
    return await ok(session, "wait_for_answer", {"pending_id": first["pending_id"], "wait_ms": 40000})


async def paused(session):
    """The agent pauses longer than the lease between its calls; the answer
    given meanwhile is still its next wait's, never the outbox's."""
    first = await ok(session, "ask_human", {"questions": QUESTIONS, "wait_ms": 0})
    said(f"PENDING {first['pending_id']}")
    await go_on()  # the lease's length passed, and the human answered
    return await ok(session, "wait_for_answer", {"pending_id": first["pending_id"], "wait_ms": 40000})


async def deadline_default(session):
    """Nobody answers: the deadline's default reaches the agent."""
    return await ok(session, "ask_human", {
        "questions": QUESTIONS, "wait_ms": 40000, "expires_in_ms": 1000,
        "on_expire": {"action": "answer",
                      "answers": [{"question_id": "q1", "selected_options": ["q1_opt2"]}]},
    })


async def deadline_expire(session):
    return await ok(session, "ask_human", {
        "questions": QUESTIONS, "wait_ms": 40000, "expires_in_ms": 1000,
    })


async def refusals(session):
    """Validation errors and an ended session are error results."""
    invalid = await refused(session, "ask_human", {"questions": [], "wait_ms": 0})
    assert invalid["code"] == "validation", invalid
    own = await refused(session, "ask_human", {"session_id": SESSION, "questions": QUESTIONS})
    assert own["code"] == "validation", own
    unknown = await refused(session, "wait_for_answer", {"pending_id": "no-such-bundle"})
    assert unknown["code"] == "not_found", unknown
    said("PENDING -")
    await go_on()  # the host ends the session
    ended = await refused(session, "ask_human", {"questions": QUESTIONS, "wait_ms": 0})
    assert ended["code"] == "session_ended", ended
    return {"pending_id": "", "codes": [invalid["code"], unknown["code"], ended["code"]]}


async def idempotent(session):
    """A retried ask_human with the same key waits on the same bundle."""
    ask = {"questions": QUESTIONS, "wait_ms": 0, "idempotency_key": "retry-1"}
    first = await ok(session, "ask_human", ask)
    again = await ok(session, "ask_human", ask)
    assert again["pending_id"] == first["pending_id"], (first, again)
    return again


async def cancelling(session):
    """cancel_question: the own bundle; another session's is not found;
    one the human answered first gives claimed false with the winner."""
    mine = await ok(session, "ask_human", {"questions": QUESTIONS, "wait_ms": 0})
    cancelled = await ok(session, "cancel_question", {"pending_id": mine["pending_id"]})
    assert cancelled["claimed"] is True and cancelled["status"] == "cancelled", cancelled
    assert list(cancelled) == ["pending_id", "claimed", "status", "response", "quorum"], cancelled
    other = await refused(session, "cancel_question", {"pending_id": os.environ["CLARION_OTHER_ID"]})
    assert other["code"] == "not_found", other
    late = await ok(session, "ask_human", {"questions": QUESTIONS, "wait_ms": 0})
    said(f"PENDING {late['pending_id']}")
    await go_on()  # the human answers it
    beaten = await ok(session, "cancel_question", {"pending_id": late["pending_id"]})
    assert beaten["claimed"] is False and beaten["status"] == "answered", beaten
    return beaten


async def cancelled(session):
    """The client gives up on a waiting ask_human (anyio cancels the call,
    and the SDK sends notifications/cancelled): it ends at once, and the
    bundle is still pending (a retry with the same key finds it)."""
    ask = {"questions": QUESTIONS, "idempotency_key": "given-up", "wait_ms": 40000}
    started = time.monotonic()
    with anyio.move_on_after(1.5):
        await session.call_tool("ask_human", ask)
        raise AssertionError("ask_human returned before anybody answered")
    assert time.monotonic() - started < 10, "the cancelled call did not end at once"
    again = await ok(session, "ask_human", {**ask, "wait_ms": 0})
    assert again["status"] == "pending", again
    return again


async def tool_lists(session):
    """Exactly the asking tools with --ask-in; none of them with --as."""
    names = [tool.name for tool in (await session.list_tools()).tools]
    assert names == ["ask_human", "wait_for_answer", "cancel_question"], names
    async with stdio_client(server("--as", "user:alice")) as (read, write):
        async with ClientSession(read, write) as answering:
            await answering.initialize()
            others = [tool.name for tool in (await answering.list_tools()).tools]
    assert not set(others) & set(names), others
    return {"pending_id": "", "ask_in": names, "as": others}


SCENARIOS = {
    "answered": answered,
    "pending": pending_then_wait,
    "paused": paused,
    "deadline_default": deadline_default,
    "deadline_expire": deadline_expire,
    "refusals": refusals,
    "idempotent": idempotent,
    "cancelling": cancelling,
    "tools": tool_lists,
    "cancelled": cancelled,
}


async def main(scenario):
    async with stdio_client(server("--ask-in", SESSION, *MIRROR)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            # As every host does: the SDK then checks each success's
            # structured content against the tool's output schema.
            await session.list_tools()
            result = await SCENARIOS[scenario](session)
    said("RESULT " + json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
