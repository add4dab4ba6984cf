"""`clarion mcp` under the official Python MCP client (PyPI `mcp`), over
stdio. Run by tests/it/doors_mcp_server.rs on both backends, with a database
it prepared through the library:

    CLARION_BIN=target/debug/clarion CLARION_DATABASE_URL=... \
    CLARION_PENDING_ID=... python tests/mcp_client/test_stdio.py

Prints the winner's response as JSON on its last line, for the Rust side to
compare with the stored resolution.
"""

import asyncio
import json
import os

from mcp import ClientSession
from mcp.client.stdio import stdio_client

import clarion_mcp
from clarion_mcp import error_of, structured

PENDING_ID = os.environ["CLARION_PENDING_ID"]


def server(principal):
    return clarion_mcp.server("--as", principal)


def answers(choice, note):
    return [
        {"question_id": "q1", "selected_options": [choice], "custom_text": note},
        {"question_id": "q2", "selected_options": ["q2_opt1"], "custom_text": ""},
    ]


async def as_alice():
    async with stdio_client(server("user:alice")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = [tool.name for tool in tools.tools]
            assert names == ["list_pending_questions", "answer_question", "list_settled_questions"], names
            schema = tools.tools[1].input_schema
            assert schema["required"] == ["pending_id"], schema

            page = await session.call_tool("list_pending_questions", {"limit": 10})
            assert page.is_error is False, page
            body = structured(page)
            assert [b["pending_id"] for b in body["bundles"]] == [PENDING_ID], body
            assert body["bundles"][0]["questions"][0]["options"][0]["option_id"] == "q1_opt1"

            wrong = await session.call_tool("answer_question", {"pending_id": PENDING_ID, "answers": "q1"})
            assert error_of(wrong) == {"error": "answers: expected an array, got a string", "code": "validation"}

            won = await session.call_tool("answer_question", {"pending_id": PENDING_ID, "answers": answers("q1_opt2", " from mcp ")})
            assert won.is_error is False, won
            body = structured(won)
            assert list(body) == ["claimed", "status", "response", "quorum"], body
            assert body["claimed"] is True and body["status"] == "answered", body
            assert body["response"]["answers"][0]["custom_text"] == "from mcp", body

            again = structured(await session.call_tool("list_pending_questions", {}))
            assert again["count"] == 0, again

            # LIST-12, WIRE-6: what was decided, and that alice decided it.
            history = await session.call_tool("list_settled_questions", {"limit": 10})
            assert history.is_error is False, history
            settled = structured(history)
            assert [b["pending_id"] for b in settled["bundles"]] == [PENDING_ID], settled
            assert settled["bundles"][0]["status"] == "answered", settled
            assert settled["bundles"][0]["response"] == body["response"], settled
            assert settled["bundles"][0]["decided_by_caller"] is True, settled
            return body["response"]


async def as_late_agent(winner):
    principal = "agent:alice/helper:questions:read,questions:answer"
    async with stdio_client(server(principal)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            late = await session.call_tool("answer_question", {"pending_id": PENDING_ID, "answers": answers("q1_opt1", "too late")})
            assert late.is_error is False, late
            body = structured(late)
            assert body["claimed"] is False and body["response"] == winner, body
            settled = structured(await session.call_tool("list_settled_questions", {}))
            assert settled["bundles"][0]["decided_by_caller"] is False, settled


async def as_reader():
    principal = "agent:alice/reader:questions:read"
    async with stdio_client(server(principal)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names == ["list_pending_questions", "list_settled_questions"], names
            denied = await session.call_tool("answer_question", {"pending_id": PENDING_ID})
            assert error_of(denied) == {"error": "capability not authorized", "code": "capability_denied"}


async def main():
    winner = await as_alice()
    await as_late_agent(winner)
    await as_reader()
    print("ok - tools listed, answered, beaten answer replayed, denied tool hidden")
    print(json.dumps(winner))


if __name__ == "__main__":
    asyncio.run(main())
