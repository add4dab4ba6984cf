"""PY-2: the checked-in module is what the generator makes of the library's
OpenAPI document (the way the OpenAPI snapshot itself is pinned)."""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("clarion_generate", ROOT / "python" / "tools" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_py_2_generated_module_matches_the_declarations() -> None:
    generate = _generator()
    expected = generate.render(generate.load_openapi(ROOT / "snapshots" / "http_openapi.snap"))
    actual = (ROOT / "python" / "clarion" / "_generated.py").read_text(encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(actual.splitlines(True), expected.splitlines(True), "checked in", "generated")
    )
    assert actual == expected, "run python python/tools/generate.py\n" + diff


def test_py_2_generated_methods_cover_every_rpc_route() -> None:
    import json

    from clarion import Clarion
    from clarion.aio import AsyncClarion
    from clarion.types import OPERATIONS

    generate = _generator()
    document = generate.load_openapi(ROOT / "snapshots" / "http_openapi.snap")
    routes = [p[len("/api/v1/rpc/") :] for p in document["paths"] if p.startswith("/api/v1/rpc/")]
    assert list(OPERATIONS) == routes
    for op in routes:
        assert callable(getattr(Clarion, op)) and callable(getattr(AsyncClarion, op)), op
    assert json.dumps(generate.render(document)) == json.dumps(generate.render(document))  # deterministic
