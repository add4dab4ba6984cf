"""PY-2: every error code as its exception class, chosen by `code` alone."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from helpers import QUESTIONS, answers

from clarion import (
    AlreadyVoted,
    CapabilityDenied,
    Clarion,
    ClarionError,
    Conflict,
    HandleClosed,
    Internal,
    LinkUsed,
    NoLongerActive,
    NotEligible,
    NotFound,
    SessionEnded,
    TimedOut,
    Unavailable,
    User,
    ValidationError,
)
from clarion.errors import BY_CODE, from_reply
from clarion.testing import Mirror
from clarion.types import ErrorCode

CLASSES = {
    "not_found": NotFound,
    "no_longer_active": NoLongerActive,
    "not_eligible": NotEligible,
    "already_voted": AlreadyVoted,
    "link_used": LinkUsed,
    "validation": ValidationError,
    "capability_denied": CapabilityDenied,
    "session_ended": SessionEnded,
    "unavailable": Unavailable,
    "timed_out": TimedOut,
    "handle_closed": HandleClosed,
    "internal": Internal,
}


def test_py_2_each_code_maps_to_one_class() -> None:
    import typing

    assert BY_CODE == CLASSES
    assert set(typing.get_args(ErrorCode)) <= set(BY_CODE), "a code the library declares has no class"
    assert len(set(BY_CODE.values())) == len(BY_CODE)
    conflicts: tuple[type[ClarionError], ...] = (NoLongerActive, AlreadyVoted, SessionEnded, LinkUsed)
    for cls in conflicts:
        assert issubclass(cls, Conflict)
    for code, cls in CLASSES.items():
        error = from_reply({"status": 418, "body": {"error": "some text"}, "code": code, "field": ""})
        assert type(error) is cls and isinstance(error, ClarionError)
        assert (error.status, error.code, error.message, error.body) == (418, code, "some text", {"error": "some text"})
    # The message never chooses the class; an unknown or missing code is the base class.
    for reply in (
        {"status": 404, "body": {"error": "clarification request not found"}, "code": "gone_fishing", "field": ""},
        {"status": 404, "body": {"error": "clarification request not found"}, "code": "", "field": ""},
    ):
        assert type(from_reply(reply)) is ClarionError


def test_py_2_errors_from_the_library(c: Clarion, m: Mirror) -> None:
    alice = c.acting_as(User(m.owner))
    with pytest.raises(NotFound) as not_found:
        alice.get_bundle(pending_id="pending-fabricated")
    assert (not_found.value.status, not_found.value.code) == (404, "not_found")
    assert not_found.value.message == "clarification request not found"

    with pytest.raises(CapabilityDenied) as denied:
        alice.ask(session_id=m.session_id, questions=QUESTIONS)
    assert (denied.value.status, denied.value.code) == (403, "capability_denied")

    with pytest.raises(ValidationError) as invalid:
        c.ask(session_id=m.session_id, questions=[{"prompt": "p", "options": [{"label": "a", "description": "a"}]}])
    assert (invalid.value.status, invalid.value.code) == (400, "validation")
    assert invalid.value.field == "questions[0].options", invalid.value
    with pytest.raises(ValidationError) as negative:
        c.wait(pending_id="p", timeout_ms=-5)
    assert negative.value.field == "timeout_ms"

    pending_id = c.ask(session_id=m.session_id, questions=QUESTIONS)["pending_id"]
    with pytest.raises(TimedOut) as timed_out:
        alice.wait_bundle(pending_id=pending_id, timeout_ms=50)
    assert (timed_out.value.status, timed_out.value.code) == (504, "timed_out")

    c.begin_turn(session_id=m.session_id)  # supersedes it: no longer active, nobody won
    with pytest.raises(NoLongerActive) as inactive:
        alice.resolve_bundle(pending_id=pending_id, answers=answers())
    assert (inactive.value.status, inactive.value.code) == (409, "no_longer_active")

    c.set_session_state(session_id=m.session_id, state="failed")
    with pytest.raises(SessionEnded) as ended:
        c.ask(session_id=m.session_id, questions=QUESTIONS)
    assert (ended.value.status, ended.value.code) == (409, "session_ended")
    assert isinstance(ended.value, Conflict)


def test_py_2_quorum_errors(c: Clarion, m: Mirror) -> None:
    bob, carol = f"bob-{m.owner}", f"carol-{m.owner}"
    c.set_members(workspace_id=m.workspace_id, members=[bob, carol])
    pending_id = c.ask(
        session_id=m.session_id, questions=QUESTIONS, quorum={"approvals": 2, "eligible": [m.owner, bob]}
    )["pending_id"]
    with pytest.raises(NotEligible) as not_eligible:
        c.acting_as(User(carol)).resolve_bundle(pending_id=pending_id, answers=answers())
    assert (not_eligible.value.status, not_eligible.value.code) == (403, "not_eligible")
    vote = c.acting_as(User(m.owner)).resolve_bundle(pending_id=pending_id, answers=answers())
    assert (vote["claimed"], vote["status"], vote["response"]) == (False, "pending", None)
    repeat = c.acting_as(User(m.owner)).resolve_bundle(pending_id=pending_id, answers=answers())
    assert repeat["status"] == "pending", "the same vote again records nothing new"
    with pytest.raises(AlreadyVoted) as again:
        c.acting_as(User(m.owner)).resolve_bundle(pending_id=pending_id, answers=answers("changed my mind"))
    assert (again.value.status, again.value.code) == (409, "already_voted")
    decided = c.acting_as(User(bob)).resolve_bundle(pending_id=pending_id, answers=answers())
    assert decided["claimed"] is True and decided["response"] is not None
    assert decided["response"]["decided_by"] == "quorum"


def test_py_2_handle_closed_after_close(database_url: str) -> None:
    handle = Clarion.open(database_url)
    alice = handle.acting_as(User("alice"))
    handle.close()
    for client in (handle, alice):
        with pytest.raises(HandleClosed) as closed:
            client.summary()
        assert (closed.value.status, closed.value.code) == (503, "handle_closed")
    handle.close()  # twice: nothing


def test_py_2_internal_error(tmp_path: Path) -> None:
    """A database broken under the handle (SQLite, whatever the suite's
    backend: the trick needs a file) is Internal, a reference only."""
    path = tmp_path / "broken.db"
    with Clarion.open(f"sqlite://{path}") as handle:
        connection = sqlite3.connect(os.fspath(path))
        connection.execute("DROP TABLE bundle_questions")
        connection.commit()
        connection.close()
        with pytest.raises(Internal) as internal:
            handle.summary()
        assert (internal.value.status, internal.value.code) == (500, "internal")
        assert internal.value.message.startswith("internal error (ref ")
