"""What the MCP client scripts share: how to start `clarion mcp`, and a
tool result's JSON (its text content must say the same)."""

import json
import os

from mcp import StdioServerParameters

BIN = os.environ["CLARION_BIN"]
URL = os.environ["CLARION_DATABASE_URL"]


def server(*mode):
    return StdioServerParameters(
        command=BIN,
        args=["mcp", "--database-url", URL, *mode],
        env={**os.environ, "RUST_LOG": "off"},
    )


def structured(result):
    """The JSON of a tool result; its text content must say the same."""
    assert result.content[0].type == "text", result
    text = json.loads(result.content[0].text)
    assert text == result.structured_content, (text, result.structured_content)
    return result.structured_content
