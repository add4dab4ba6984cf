"""PY-2, PY-4: every operation once through the package, each result
conforming to its generated type; the pytest plugin's fixture and helper."""

from __future__ import annotations

import typing
import uuid
from typing import Any

import pytest
from helpers import QUESTIONS, answers, conforms

import clarion
from clarion import Agent, Clarion, OpenError, System, User
from clarion.aio import AsyncClarion
from clarion.testing import Mirror, answer_as
from clarion.types import OPERATIONS


def _result_types() -> dict[str, Any]:
    """Each operation's declared result type, from the generated signatures."""
    return {op: typing.get_type_hints(getattr(Clarion, op))["return"] for op in OPERATIONS}


def test_py_2_every_operation_once_with_its_typed_result(
    c: Clarion, m: Mirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    results: dict[str, list[Any]] = {}
    inner = Clarion._call

    def recording(self: Clarion, op: str, args: dict[str, Any]) -> Any:
        body = inner(self, op, args)
        results.setdefault(op, []).append(body)
        return body

    monkeypatch.setattr(Clarion, "_call", recording)
    tag = uuid.uuid4().hex[:8]
    owner = User(m.owner)
    alice = c.acting_as(owner)

    # The mirror, again: upserts are idempotent.
    assert c.upsert_workspace(id=m.workspace_id, owner_id=m.owner, name="W") == {"ok": True}
    assert c.upsert_task(id=m.task_id, workspace_id=m.workspace_id, title="T") == {"ok": True}
    assert c.upsert_session(id=m.session_id, task_id=m.task_id, is_primary=True) == {"ok": True}
    assert c.begin_turn(session_id=m.session_id)["turn_id"]
    asked = c.ask(session_id=m.session_id, questions=QUESTIONS, context="ctx", idempotency_key=f"k-{tag}")
    pending_id = asked["pending_id"]
    assert asked["created"] is True
    assert c.has_pending_clarification(session_id=m.session_id) == {"has_pending": True}
    page = alice.list_pending(workspace_id=m.workspace_id, limit=200)
    assert [b["pending_id"] for b in page["bundles"]] == [pending_id]
    assert alice.get_bundle(pending_id=pending_id)["status"] == "pending"
    assert alice.summary()["pending_bundles"] >= 1
    assert alice.pending_actions(task_ids=[m.task_id])["tasks"][0]["task_pending_action"] == "clarification"
    assert alice.authorize(operation="resolve_bundle", pending_id=pending_id) == {"allowed": True, "reason": ""}
    link = c.answer_link(pending_id=pending_id, user_id=m.owner, ttl_ms=60_000)
    assert link["url"].startswith("/a/")
    assert c.rotate_link_key() == {"ok": True}
    assert c.detach_session(session_id=m.session_id) == {"ok": True}

    agent = c.acting_as(Agent(m.owner, "bot", grants=["questions:read", "questions:answer"]))
    won = agent.resolve_bundle(pending_id=pending_id, answers=answers(" blue "))
    assert won["claimed"] is True and won["status"] == "answered"
    assert won["response"] is not None and won["response"]["decided_by"] == "agent"
    lost = alice.cancel_bundle(pending_id=pending_id)
    assert lost["claimed"] is False and lost["response"] == won["response"]
    assert alice.wait_bundle(pending_id=pending_id, timeout_ms=0) == lost
    outbox = c.pending_deliveries(limit=200)["deliveries"]
    assert isinstance(outbox, list)
    assert c.wait(pending_id=pending_id, timeout_ms=0) == {"outcome": "answered", "response": won["response"]}
    assert c.ack_delivery(pending_id=pending_id) == {"ok": True}
    assert [b["pending_id"] for b in alice.list_settled(workspace_id=m.workspace_id)["bundles"]] == [pending_id]
    assert [a["outcome"] for a in alice.attempts(pending_id=pending_id)["attempts"]] == ["won", "lost"]
    events = alice.events_after(after="", limit=1000)
    assert events["reset"] is False
    assert c.expire_due(limit=1)["settled"] >= 0
    assert c.prune(older_than_ms=10 * 365 * 24 * 3600 * 1000)["pruned"] >= 0

    hook = c.webhook_add(url=f"http://127.0.0.1:9/hook-{tag}", events=["bundle.resolved"], allow_private=True)
    assert hook["secret"].startswith("whsec_")
    assert [w["url"] for w in c.webhook_list()["webhooks"] if w["id"] == hook["id"]] == [f"http://127.0.0.1:9/hook-{tag}"]
    assert c.webhook_disable(id=hook["id"]) == {"ok": True}
    assert c.webhook_enable(id=hook["id"]) == {"ok": True}
    assert c.webhook_rotate(id=hook["id"], overlap_ms=1000)["secret"] != hook["secret"]
    assert c.webhook_remove(id=hook["id"]) == {"ok": True}

    bob = f"bob-{tag}"
    assert c.upsert_user(user_id=m.owner, name="Alice", email=f"{m.owner}@example.org") == {"ok": True}
    assert c.upsert_user(user_id=bob, name="Bob") == {"ok": True}
    assert c.list_users(limit=200)["count"] >= 1
    assert c.set_members(workspace_id=m.workspace_id, members=[bob]) == {"ok": True}
    assert c.members(workspace_id=m.workspace_id) == {"members": [bob]}
    assert alice.people(user_ids=[m.owner, bob]) == {
        "people": [{"user_id": m.owner, "name": "Alice"}, {"user_id": bob, "name": "Bob"}]
    }
    assert alice.whoami() == {"kind": "user", "user_id": m.owner, "agent_id": "", "name": "Alice"}
    assert c.delete_user(user_id=bob) == {"ok": True}
    assert c.mail_status()["mail"]["configured"] in (True, False)

    assert c.set_session_state(session_id=m.session_id, state="completed") == {"ok": True}
    assert c.delete_session(id=m.session_id) == {"ok": True}
    assert c.delete_task(id=m.task_id) == {"ok": True}
    assert c.delete_workspace(id=m.workspace_id) == {"ok": True}

    assert sorted(results) == sorted(OPERATIONS), sorted(set(OPERATIONS) - set(results))
    types = _result_types()
    for op, bodies in results.items():
        for body in bodies:
            conforms(body, types[op], op)


def test_py_2_principals_are_small_frozen_types() -> None:
    assert System().to_wire() == {"kind": "system"}
    assert User("alice").to_wire() == {"kind": "user", "user_id": "alice"}
    grants = ["questions:read"]
    agent = Agent("alice", "bot", grants=grants)
    grants.append("questions:answer")
    assert agent.to_wire() == {"kind": "agent", "user_id": "alice", "agent_id": "bot", "grants": ["questions:read"]}
    assert hash(agent) == hash(Agent("alice", "bot", grants=("questions:read",)))
    with pytest.raises(AttributeError):
        agent.user_id = "mallory"  # type: ignore[misc]


def test_py_2_open_failure_and_context_manager(database_url: str) -> None:
    with pytest.raises(OpenError) as raised:
        Clarion.open("mysql://db/x")
    assert raised.value.message.startswith("invalid database URL")
    with pytest.raises(OpenError) as raised:
        Clarion.open(database_url, pool_size=0)
    assert "pool_size" in raised.value.message
    with Clarion.open(database_url, pool_size=2, public_url="https://inbox.example.com", sweep_ms=1000) as handle:
        assert handle.summary()["pending_bundles"] >= 0
        assert repr(handle).startswith("<Clarion open as System()")
    assert handle.closed
    assert clarion.abi_version() == "1"


async def _async_round_trip(url: str) -> None:
    async with await AsyncClarion.open(url) as aio:
        tag = uuid.uuid4().hex[:8]
        await aio.upsert_workspace(id=f"w-{tag}", owner_id=f"alice-{tag}")
        await aio.upsert_task(id=f"t-{tag}", workspace_id=f"w-{tag}")
        await aio.upsert_session(id=f"s-{tag}", task_id=f"t-{tag}")
        asked = await aio.ask(session_id=f"s-{tag}", questions=QUESTIONS)
        resolved = await aio.acting_as(User(f"alice-{tag}")).resolve_bundle(
            pending_id=asked["pending_id"], answers=answers()
        )
        assert resolved["claimed"] is True
        waited = await aio.wait(pending_id=asked["pending_id"])
        assert waited["outcome"] == "answered"
    assert aio.closed


def test_py_3_asyncio_client_round_trip(database_url: str) -> None:
    import asyncio

    asyncio.run(_async_round_trip(database_url))


def test_py_4_fixture_and_answer_as(clarion_mirror: Mirror) -> None:
    c = clarion_mirror.handle
    asked = c.ask(session_id=clarion_mirror.session_id, questions=QUESTIONS)
    resolved = answer_as(c, User(clarion_mirror.owner), asked["pending_id"])
    assert resolved["claimed"] is True and resolved["response"] is not None
    assert [a["selected_options"] for a in resolved["response"]["answers"]] == [["q1_opt1"], ["s"]]
    assert c.wait(pending_id=asked["pending_id"])["outcome"] == "answered"
    rejected = c.ask(session_id=clarion_mirror.session_id, questions=QUESTIONS)
    assert answer_as(c, User(clarion_mirror.owner), rejected["pending_id"], rejected=True, reject_reason="no")[
        "status"
    ] == "rejected"
    given = c.ask(session_id=clarion_mirror.session_id, questions=QUESTIONS)
    chosen = answer_as(c, System(), given["pending_id"], answers(" mine "))
    assert chosen["response"] is not None and chosen["response"]["answers"][0]["custom_text"] == "mine"


def test_py_4_fixture_default_is_fresh_sqlite(pytester: pytest.Pytester) -> None:
    """Without an override the fixture opens SQLite in the test's tmp_path."""
    pytester.makeconftest(
        "import importlib.metadata\n"
        "if not any(ep.name == 'clarion' for ep in importlib.metadata.entry_points(group='pytest11')):\n"
        "    pytest_plugins = ['clarion.testing']\n"
    )
    pytester.makepyfile(
        "from clarion import User\n"
        "from clarion.testing import answer_as\n"
        "def test_it(clarion_mirror, clarion_database_url, tmp_path):\n"
        "    assert clarion_database_url == 'sqlite://' + str(tmp_path / 'clarion.db')\n"
        "    c = clarion_mirror.handle\n"
        "    q = [{'prompt': 'p', 'options': [{'label': 'a', 'description': 'a'}, {'label': 'b', 'description': 'b'}]}]\n"
        "    asked = c.ask(session_id=clarion_mirror.session_id, questions=q)\n"
        "    assert answer_as(c, User(clarion_mirror.owner), asked['pending_id'])['claimed']\n"
        "    assert c.list_pending()['count'] == 0\n"
    )
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
