"""pytest helpers for code that asks through clarion (a pytest plugin).

    def test_my_agent(clarion_mirror):
        c = clarion_mirror.handle
        asked = c.ask(session_id=clarion_mirror.session_id, questions=[...])
        answer_as(c, User(clarion_mirror.owner), asked["pending_id"])
        assert c.wait(pending_id=asked["pending_id"])["outcome"] == "answered"

`clarion_mirror` opens a fresh SQLite database in the test's `tmp_path`
with a workspace owned by `owner`, a task in it and a primary session.
Override the `clarion_database_url` fixture to use another database (ids
are unique per test, so one database can hold many tests).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from ._client import Clarion
from ._generated import AnswerArgs, Resolved
from .principals import Principal


@dataclass(frozen=True)
class Mirror:
    """An open handle (acting as the system) and what it mirrors."""

    handle: Clarion
    workspace_id: str
    task_id: str
    session_id: str
    #: The workspace's owner: the user who sees and may answer its bundles.
    owner: str


def mirror(handle: Clarion, owner: str = "alice") -> Mirror:
    """Mirrors a new workspace (owned by `owner`), task and primary session."""
    tag = uuid.uuid4().hex[:12]
    workspace_id, task_id, session_id = f"w-{tag}", f"t-{tag}", f"s-{tag}"
    handle.upsert_workspace(id=workspace_id, owner_id=owner, name=f"Workspace {tag}")
    handle.upsert_task(id=task_id, workspace_id=workspace_id, title=f"Task {tag}")
    handle.upsert_session(id=session_id, task_id=task_id, is_primary=True)
    return Mirror(handle, workspace_id, task_id, session_id, owner)


def answer_as(
    handle: Clarion,
    principal: Principal,
    pending_id: str,
    answers: Sequence[AnswerArgs] | None = None,
    *,
    rejected: bool = False,
    reject_reason: str | None = None,
) -> Resolved:
    """Resolves the bundle as `principal`: with `answers`, a rejection, or by
    default the first option of each question."""
    acting = handle.acting_as(principal)
    if rejected:
        return acting.resolve_bundle(pending_id=pending_id, rejected=True, reject_reason=reject_reason)
    if answers is None:
        bundle = acting.get_bundle(pending_id=pending_id)
        answers = [
            {"question_id": q["question_id"], "selected_options": [q["options"][0]["option_id"]]}
            for q in bundle["questions"]
        ]
    return acting.resolve_bundle(pending_id=pending_id, answers=list(answers))


@pytest.fixture
def clarion_database_url(tmp_path: Path) -> str:
    """Where `clarion_mirror` opens: a fresh SQLite file in `tmp_path`."""
    return f"sqlite://{tmp_path / 'clarion.db'}"


@pytest.fixture
def clarion_mirror(clarion_database_url: str) -> Iterator[Mirror]:
    """A fresh handle with a mirrored workspace, task and session; closed after."""
    with Clarion.open(clarion_database_url) as handle:
        yield mirror(handle)


__all__ = ["Mirror", "answer_as", "clarion_database_url", "clarion_mirror", "mirror"]
