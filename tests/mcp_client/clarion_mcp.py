"""What the MCP client scripts share: how to start `clarion mcp`, a
tool result's JSON (its text content must say the same), and a tool
error's (in its text content only: docs/mcp.md)."""

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


def error_of(result):
    """A tool error's `{"error", "code"}`: its text content. An error has no
    structured content, which would have to match the tool's output schema."""
    assert result.is_error is True, result
    assert result.structured_content is None, result
    assert result.content[0].type == "text", result
    body = json.loads(result.content[0].text)
    assert list(body) == ["error", "code"], body
    return body
