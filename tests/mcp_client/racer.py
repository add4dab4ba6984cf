"""One MCP racer for the cross-door race (tests/it/http_race.rs, HTTP-9):
`clarion mcp` under the official Python MCP client, over stdio.

    CLARION_BIN=target/debug/clarion CLARION_DATABASE_URL=... \
    python tests/mcp_client/racer.py "racer 3"

Prints `ready` once the session is initialized. Then, for every line
`<pending_id>` read from stdin, calls `answer_question` at once and prints
the tool result's text content — the server's own bytes — as one line.
Ends when stdin closes.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN = os.environ["CLARION_BIN"]
URL = os.environ["CLARION_DATABASE_URL"]
NOTE = sys.argv[1]


async def race():
    server = StdioServerParameters(
        command=BIN,
        args=["mcp", "--database-url", URL, "--as", "user:alice"],
        env={**os.environ, "RUST_LOG": "off"},
    )
    loop = asyncio.get_running_loop()
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            print("ready", flush=True)
            while True:
                line = await loop.run_in_executor(None, sys.stdin.readline)
                if not line:
                    return
                pending_id = line.strip()
                answers = [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": NOTE}]
                result = await session.call_tool(
                    "answer_question", {"pending_id": pending_id, "answers": answers}
                )
                assert result.is_error is False, result
                text = json.loads(result.content[0].text)
                assert text == result.structured_content, (text, result.structured_content)
                print(result.content[0].text, flush=True)


asyncio.run(race())
