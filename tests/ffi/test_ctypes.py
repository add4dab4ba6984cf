"""The clarion C ABI (WIRE-5) from Python through ctypes: every operation,
every error class, hostile pointers and bytes, and 32 threads racing one
bundle. Run by tests/it/doors_ffi_consumers.rs on both backends:

    CLARION_LIB=target/debug/deps/libclarion.so \
    CLARION_DATABASE_URL=sqlite:///tmp/x.db python3 tests/ffi/test_ctypes.py
"""

import base64
import ctypes
import json
import os
import sqlite3
import sys
import tempfile
import threading
import time
import uuid

LIB = ctypes.CDLL(os.environ["CLARION_LIB"])  # CDLL releases the GIL per call
URL = os.environ["CLARION_DATABASE_URL"]

LIB.clarion_abi_version.restype = ctypes.c_char_p
LIB.clarion_abi_version.argtypes = []
LIB.clarion_open.restype = ctypes.c_void_p
LIB.clarion_open.argtypes = [ctypes.c_char_p]
# The reply is kept as a raw pointer so that it can be freed.
LIB.clarion_call.restype = ctypes.c_void_p
LIB.clarion_call.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
LIB.clarion_string_free.restype = None
LIB.clarion_string_free.argtypes = [ctypes.c_void_p]
LIB.clarion_close.restype = None
LIB.clarion_close.argtypes = [ctypes.c_void_p]
LIB.clarion_last_error.restype = ctypes.c_char_p
LIB.clarion_last_error.argtypes = []

SYSTEM = {"kind": "system"}
RUN = uuid.uuid4().hex[:8]  # ids unique to this run


def user(user_id):
    return {"kind": "user", "user_id": user_id}


def agent(user_id, *grants):
    return {"kind": "agent", "user_id": user_id, "agent_id": "bot", "grants": list(grants)}


def raw_call(handle, request_bytes):
    """One clarion_call on raw bytes: (status, body)."""
    pointer = LIB.clarion_call(handle, request_bytes)
    assert pointer, "clarion_call returned NULL"
    try:
        reply = json.loads(ctypes.string_at(pointer).decode("utf-8"))
    finally:
        LIB.clarion_string_free(pointer)
    # WIRE-5: the code and field words beside every body.
    assert list(reply) == ["status", "body", "code", "field"], reply
    status, body, code, field = reply["status"], reply["body"], reply["code"], reply["field"]
    assert (code == "") == (status < 300), reply
    assert field == "" or (status == 400 and code == "validation"), reply
    if code == "validation":
        assert body["error"].startswith(field + ": " if field else ""), reply
    return status, body


def call(handle, op, principal, args=None):
    request = {"op": op, "principal": principal}
    if args is not None:
        request["args"] = args
    return raw_call(handle, json.dumps(request).encode("utf-8"))


def ok(handle, op, principal, args=None):
    status, body = call(handle, op, principal, args)
    assert status == 200, (op, status, body)
    return body


def expect_error(handle, status, message, op, principal, args=None):
    got_status, body = call(handle, op, principal, args)
    assert got_status == status, (op, got_status, body)
    assert list(body) in (["error"], ["error", "code"]), body
    assert body["error"].startswith(message), (op, body)
    return body


def open_db(url=URL, **extra):
    config = json.dumps({"database_url": url, **extra}).encode()
    handle = LIB.clarion_open(config)
    assert handle, LIB.clarion_last_error()
    return handle


QUESTIONS = [
    {"title": "Colour", "prompt": "Which colour?",
     "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
    {"question_id": "size", "title": "Size", "prompt": "Which size?",
     "options": [{"option_id": "s", "label": "Small", "description": "s"},
                 {"option_id": "l", "label": "Large", "description": "l"}]},
]


def mirror(db, name, owner):
    ws, task, session = f"w-{name}-{RUN}", f"t-{name}-{RUN}", f"s-{name}-{RUN}"
    assert ok(db, "upsert_workspace", SYSTEM, {"id": ws, "owner_id": owner, "name": f"Workspace {task}"}) == {"ok": True}
    assert ok(db, "upsert_task", SYSTEM, {"id": task, "workspace_id": ws, "title": f"Task {task}"}) == {"ok": True}
    assert ok(db, "upsert_session", SYSTEM, {"id": session, "task_id": task, "is_primary": True}) == {"ok": True}
    return task, session


def ask(db, session, **extra):
    body = ok(db, "ask", SYSTEM, {"session_id": session, "questions": QUESTIONS, "context": "ctx", **extra})
    assert body["created"] is True and list(body) == ["pending_id", "created"], body
    return body["pending_id"]


def answers(text):
    return [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": text},
            {"question_id": "size", "selected_options": ["l"], "custom_text": ""}]


# ---- the tests ---------------------------------------------------------

def test_version_and_open_errors():
    assert LIB.clarion_abi_version() == b"1"
    cases = [
        (None, "config: NULL pointer"),
        (b"not json", "config: not valid JSON"),
        (b"\xff\xfe", "config: not valid UTF-8"),
        (b"[]", "config: expected a JSON object"),
        (b"{}", "config.database_url: required"),
        (json.dumps({"database_url": URL, "pool_size": 0}).encode(), "config.pool_size"),
        (json.dumps({"database_url": URL, "colour": "red"}).encode(), "config.colour: unknown setting"),
        (json.dumps({"database_url": URL, "sweep_ms": 5}).encode(), "config.sweep_ms"),
        (json.dumps({"database_url": URL, "sweep_ms": "fast"}).encode(), "config.sweep_ms"),
        (json.dumps({"database_url": URL, "public_url": "ftp://inbox.example.com"}).encode(),
         "config.public_url: must be an absolute http or https URL"),
        (json.dumps({"database_url": URL, "public_url": "https://inbox.example.com/?q"}).encode(),
         "config.public_url: must be an absolute http or https URL"),
        (json.dumps({"database_url": URL, "public_url": 7}).encode(), "config.public_url: expected a string"),
        (b'{"database_url": "mysql://db/x"}', "invalid database URL"),
        (b'{"database_url": "postgres://nobody@127.0.0.1:1/none"}', ""),
    ]
    for config, message in cases:
        assert LIB.clarion_open(config) is None, config
        error = LIB.clarion_last_error()
        assert error is not None and error.decode().startswith(message), (config, error)
    handle = open_db()
    assert LIB.clarion_last_error() is None  # a successful open clears it
    LIB.clarion_close(handle)
    LIB.clarion_close(None)
    LIB.clarion_string_free(None)


def test_hostile_requests(db):
    assert raw_call(None, b"{}") == (400, {"error": "handle: NULL pointer"})
    assert raw_call(db, None) == (400, {"error": "request: NULL pointer"})
    assert raw_call(db, b'{"op":"summary\xff"}') == (400, {"error": "request: not valid UTF-8"})
    status, body = raw_call(db, b"{\"op\": ")
    assert status == 400 and body["error"].startswith("request: not valid JSON"), body
    status, body = raw_call(db, b"[" * 200_000 + b"]" * 200_000)
    assert status == 400 and "recursion limit" in body["error"], body
    huge = json.dumps({"op": "summary", "principal": SYSTEM, "args": {"pad": "x" * (2 << 20)}}).encode()
    status, body = raw_call(db, huge)
    assert status == 400 and "larger than" in body["error"], body
    # SQL metacharacters are inert data.
    evil = "x'; DROP TABLE bundles; --"
    expect_error(db, 404, "clarification request not found", "get_bundle", user("alice"), {"pending_id": evil})
    assert ok(db, "list_pending", user(evil), {"workspace_id": evil})["count"] == 0


def test_envelope_and_argument_errors(db):
    expect_error(db, 400, "op: unknown operation", "launch", SYSTEM)
    expect_error(db, 400, "principal.kind: unknown kind", "summary", {"kind": "root"})
    expect_error(db, 400, "principal.user_id: required", "summary", {"kind": "user"})
    expect_error(db, 400, "pending_id: required", "get_bundle", user("alice"), {})
    expect_error(db, 400, "pending_id: must not be empty", "get_bundle", user("alice"), {"pending_id": ""})
    expect_error(db, 400, "limit: expected an integer", "list_pending", user("alice"), {"limit": "ten"})
    expect_error(db, 400, "cursor: malformed cursor", "list_pending", user("alice"), {"cursor": "!!"})
    expect_error(db, 400, "verbose: unknown argument", "summary", user("alice"), {"verbose": True})
    expect_error(db, 400, "timeout_ms: must not be negative", "wait", SYSTEM, {"pending_id": "p", "timeout_ms": -5})
    # Capability before arguments (AUTH-2): nothing about args leaks.
    denied = expect_error(db, 403, "capability not authorized", "ask", user("alice"), {"nonsense": 1})
    assert denied == {"error": "capability not authorized", "code": "capability_denied"}
    expect_error(db, 403, "capability not authorized", "resolve_bundle", agent("alice", "questions:read"), {})
    expect_error(db, 403, "capability not authorized", "list_pending", agent("alice"), {})
    expect_error(db, 403, "capability not authorized", "cancel_bundle", agent("alice", "questions:read", "questions:answer"), {})
    expect_error(db, 403, "capability not authorized", "summary", {"kind": "unclassified"})


def test_every_operation(db):
    task, session = mirror(db, "ops", "alice")
    turn = ok(db, "begin_turn", SYSTEM, {"session_id": session})
    assert list(turn) == ["turn_id"] and turn["turn_id"], turn
    pending_id = ask(db, session)
    assert ok(db, "has_pending_clarification", SYSTEM, {"session_id": session}) == {"has_pending": True}

    page = ok(db, "list_pending", user("alice"), {"limit": 200})
    assert list(page) == ["bundles", "count", "next_cursor"], page
    mine = [b for b in page["bundles"] if b["pending_id"] == pending_id]
    assert len(mine) == 1 and mine[0]["task_id"] == task, page
    assert list(mine[0]) == ["pending_id", "task_id", "task_title", "workspace_id", "workspace_name",
                             "session_id", "kind", "created_at", "age_seconds", "expires_at",
                             "on_expire", "quorum", "nudges", "context", "questions"], mine[0]
    assert mine[0]["expires_at"] == "" and mine[0]["on_expire"] == "", mine[0]
    assert (mine[0]["task_title"], mine[0]["workspace_name"]) == (f"Task {task}", f"Workspace {task}"), mine[0]
    assert list(mine[0]["questions"][0]) == ["question_id", "title", "prompt", "status", "multi_select",
                                             "options"], mine[0]
    assert mine[0]["questions"][0]["multi_select"] is True, mine[0]
    detail = ok(db, "get_bundle", user("alice"), {"pending_id": pending_id})
    assert detail["status"] == "pending" and detail["response"] is None, detail
    assert list(detail)[-5:] == ["status", "response", "default_response", "decided_by_caller", "may_vote"], detail
    assert detail["decided_by_caller"] is False, detail
    assert detail["default_response"] is None, detail
    summary = ok(db, "summary", user("alice"))
    assert list(summary) == ["pending_bundles", "pending_questions", "oldest_age_seconds"], summary
    assert summary["pending_bundles"] >= 1
    actions = ok(db, "pending_actions", user("alice"), {"task_ids": [task, "t-unknown"]})
    assert actions == {"tasks": [{"task_id": task, "task_pending_action": "clarification",
                                  "primary_session_pending_action": "clarification"}]}, actions
    assert ok(db, "authorize", user("alice"), {"operation": "resolve_bundle", "pending_id": pending_id}) == \
        {"allowed": True, "reason": ""}
    assert ok(db, "authorize", user("bob"), {"operation": "get_bundle", "task_id": task}) == \
        {"allowed": False, "reason": "not_found"}

    assert ok(db, "detach_session", SYSTEM, {"session_id": session}) == {"ok": True}
    won = ok(db, "resolve_bundle", agent("alice", "questions:answer"), {"pending_id": pending_id, "answers": answers(" blue ")})
    assert list(won) == ["success", "claimed", "status", "response", "quorum"], won
    assert won["claimed"] is True and won["status"] == "answered"
    assert list(won["response"]) == \
        ["pending_id", "answers", "rejected", "reject_reason", "responded_at", "decided_by", "voters"]
    assert won["response"]["decided_by"] == "agent", won
    assert won["response"]["answers"][0]["custom_text"] == "blue"
    lost = ok(db, "cancel_bundle", user("alice"), {"pending_id": pending_id})
    assert lost["claimed"] is False and lost["response"] == won["response"], lost
    watched = ok(db, "wait_bundle", user("alice"), {"pending_id": pending_id, "timeout_ms": 0})
    assert watched == lost, watched
    outbox = ok(db, "pending_deliveries", SYSTEM, {"limit": 200})["deliveries"]
    entry = [d for d in outbox if d["pending_id"] == pending_id]
    assert len(entry) == 1 and entry[0]["response"] == won["response"], outbox
    assert list(entry[0]) == ["pending_id", "task_id", "session_id", "status", "questions", "response"]
    waited = ok(db, "wait", SYSTEM, {"pending_id": pending_id, "timeout_ms": 1000})
    assert waited == {"outcome": "answered", "response": won["response"]}, waited
    assert ok(db, "ack_delivery", SYSTEM, {"pending_id": pending_id}) == {"ok": True}
    assert ok(db, "ack_delivery", SYSTEM, {"pending_id": pending_id}) == {"ok": True}

    rejected = ask(db, session)
    body = ok(db, "resolve_bundle", user("alice"), {"pending_id": rejected, "rejected": True, "reject_reason": "no"})
    assert body["status"] == "rejected" and body["response"]["reject_reason"] == "no", body
    cancelled = ask(db, session)
    assert ok(db, "cancel_bundle", SYSTEM, {"pending_id": cancelled})["status"] == "cancelled"
    assert ok(db, "get_bundle", user("alice"), {"pending_id": cancelled})["status"] == "cancelled"

    expiring = ask(db, session)
    assert ok(db, "set_session_state", SYSTEM, {"session_id": session, "state": "completed"}) == {"ok": True}
    assert ok(db, "wait", SYSTEM, {"pending_id": expiring, "timeout_ms": 0}) == {"outcome": "expired", "response": None}
    assert ok(db, "get_bundle", user("alice"), {"pending_id": expiring})["status"] == "expired"
    assert ok(db, "delete_session", SYSTEM, {"id": session}) == {"ok": True}
    assert ok(db, "delete_session", SYSTEM, {"id": session}) == {"ok": True}
    assert ok(db, "delete_task", SYSTEM, {"id": task}) == {"ok": True}
    expect_error(db, 404, "clarification request not found", "get_bundle", user("alice"), {"pending_id": pending_id})


def test_event_log(db):
    """EVT-2 through the C ABI: an asked and a resolved event, in order, with
    their keys; what bob may not see stays hidden; refusals."""
    task, session = mirror(db, "events", "alice")
    pending_id = ask(db, session)
    won = ok(db, "resolve_bundle", user("alice"), {"pending_id": pending_id, "answers": answers("evt")})
    seen, after = [], ""
    # EVT-1a: on PostgreSQL a reader waits for transactions still open
    # anywhere in the cluster (other tests run beside this one).
    deadline = time.time() + 30
    while len(seen) < 2 and time.time() < deadline:
        page = ok(db, "events_after", user("alice"), {"after": after, "limit": 1000})
        assert list(page) == ["events", "next", "reset"], page
        assert page["reset"] is False, page
        seen += [event for event in page["events"] if event["pending_id"] == pending_id]
        if page["next"] == after:
            time.sleep(0.02)
        after = page["next"]
    assert [event["type"] for event in seen] == ["bundle.asked", "bundle.resolved"], seen
    assert list(seen[0]) == ["position", "type", "at", "pending_id", "task_id", "data"], seen[0]
    assert seen[0]["task_id"] == task and seen[0]["data"]["pending_id"] == pending_id, seen[0]
    assert seen[1]["data"] == {"status": "answered", "response": won["response"]}, seen[1]
    bob, after = [], ""
    while True:
        page = ok(db, "events_after", user("bob"), {"after": after, "limit": 1000})
        bob += [event for event in page["events"] if event["pending_id"] == pending_id]
        if page["next"] == after:
            break
        after = page["next"]
    assert bob == [], bob
    assert call(db, "events_after", agent("alice", "questions:answer"))[0] == 403
    status, body = call(db, "events_after", user("alice"), {"after": "not a position"})
    assert status == 400 and "after" in body["error"], body


def test_a_deadline_through_the_c_abi(db):
    task, session = mirror(db, "deadline", "alice")
    pending_id = ask(db, session, expires_in_ms=3_600_000,
                     on_expire={"action": "reject", "reject_reason": " no answer "})
    detail = ok(db, "get_bundle", user("alice"), {"pending_id": pending_id})
    assert detail["expires_at"].endswith("Z") and detail["on_expire"] == "reject", detail
    assert detail["default_response"] == {"answers": [], "rejected": True, "reject_reason": "no answer"}, detail
    expect_error(db, 400, "on_expire.action", "ask", SYSTEM,
                 {"session_id": session, "questions": QUESTIONS, "on_expire": {"action": "answer", "answers": []}})
    expect_error(db, 400, "expires_at", "ask", SYSTEM,
                 {"session_id": session, "questions": QUESTIONS, "expires_at": "2026-01-01T00:00:00.1234567Z"})
    assert ok(db, "expire_due", SYSTEM, {"limit": 10}) == {"settled": 0, "nudged": 0}
    expect_error(db, 403, "capability not authorized", "expire_due", user("alice"), {})


def test_the_attempt_ledger_through_the_c_abi(db):
    """AUD-3, AUD-4: a winner and a loser through the C ABI are recorded
    with channel `c_abi`, in order, with exactly the AUD-3 keys; the digest
    is the SHA-256 of the normalized submission (AUD-5); bob gets the
    not-found and an agent the capability refusal."""
    import hashlib
    _, session = mirror(db, "ledger", "alice")
    pending_id = ask(db, session)
    ok(db, "resolve_bundle", user("alice"), {"pending_id": pending_id, "answers": answers(" first ")})
    ok(db, "cancel_bundle", user("alice"), {"pending_id": pending_id})
    body = ok(db, "attempts", user("alice"), {"pending_id": pending_id})
    assert list(body) == ["attempts"], body
    entries = body["attempts"]
    assert [(e["channel"], e["outcome"]) for e in entries] == [("c_abi", "won"), ("c_abi", "lost")], entries
    assert list(entries[0]) == ["at", "principal_kind", "user_id", "agent_id", "channel", "outcome", "digest"]
    assert entries[0]["principal_kind"] == "user" and entries[0]["user_id"] == "alice", entries
    normalized = {"answers": [{"question_id": "q1", "selected_options": ["q1_opt1"], "custom_text": "first"},
                              {"question_id": "size", "selected_options": ["l"], "custom_text": ""}],
                  "rejected": False, "reject_reason": ""}
    text = json.dumps(normalized, separators=(",", ":"), ensure_ascii=False)
    assert entries[0]["digest"] == hashlib.sha256(text.encode()).hexdigest(), entries[0]
    assert entries[1]["digest"] == hashlib.sha256(b'{"cancel":true}').hexdigest(), entries[1]
    expect_error(db, 404, "clarification request not found", "attempts", user("bob"), {"pending_id": pending_id})
    expect_error(db, 403, "capability not authorized", "attempts", agent("alice", "questions:read"),
                 {"pending_id": pending_id})


def test_every_error_class(db):
    task, session = mirror(db, "errs", "alice")
    pending_id = ask(db, session)
    not_found = {"error": "clarification request not found"}
    # 404 for a foreign bundle and a fabricated one, byte-identical (REL-4).
    for op, args in [("get_bundle", {"pending_id": pending_id}),
                     ("wait_bundle", {"pending_id": pending_id, "timeout_ms": 0}),
                     ("resolve_bundle", {"pending_id": pending_id, "answers": answers("x")}),
                     ("cancel_bundle", {"pending_id": pending_id})]:
        foreign = call(db, op, user("mallory"), args)
        fabricated = call(db, op, user("mallory"), {**args, "pending_id": "pending-fabricated"})
        assert foreign == fabricated == (404, not_found), (op, foreign, fabricated)
    assert call(db, "authorize", user("mallory"), {"operation": "get_bundle", "pending_id": pending_id}) == \
        call(db, "authorize", user("mallory"), {"operation": "get_bundle", "pending_id": "pending-fabricated"})
    # 404 session and task (LIFE-10).
    assert call(db, "begin_turn", SYSTEM, {"session_id": "s-none"}) == (404, {"error": "session not found"})
    assert call(db, "upsert_session", SYSTEM, {"id": "s-x", "task_id": "t-none"}) == (404, {"error": "task not found"})
    # 400 validation on stored data (VAL-1) and without it (VAL-4).
    expect_error(db, 400, "answers:", "resolve_bundle", user("alice"), {"pending_id": pending_id, "answers": []})
    expect_error(db, 400, "answers:", "resolve_bundle", user("alice"),
                 {"pending_id": pending_id, "rejected": True, "answers": answers("x")})
    # 504: nobody answers in time.
    assert call(db, "wait_bundle", user("alice"), {"pending_id": pending_id, "timeout_ms": 50}) == \
        (504, {"error": "timed out waiting for a response"})
    assert ok(db, "wait", SYSTEM, {"pending_id": pending_id, "timeout_ms": 0}) == {"outcome": "timed_out", "response": None}
    # 409: superseded, no winner; then asking on an ended session.
    ok(db, "begin_turn", SYSTEM, {"session_id": session})
    assert call(db, "resolve_bundle", user("alice"), {"pending_id": pending_id, "answers": answers("x")}) == \
        (409, {"error": "clarification request is no longer active"})
    assert call(db, "wait_bundle", user("alice"), {"pending_id": pending_id, "timeout_ms": 0}) == \
        (409, {"error": "clarification request is no longer active"})
    ok(db, "set_session_state", SYSTEM, {"session_id": session, "state": "failed"})
    assert call(db, "ask", SYSTEM, {"session_id": session, "questions": QUESTIONS}) == (409, {"error": "session has ended"})


def test_single_select_through_the_c_abi(db):
    """VAL-9, ASK-6: a single-select question refuses two options naming the
    field, accepts a duplicate (counted once) and none; a deadline's default
    is checked the same way at ask time."""
    _, session = mirror(db, "single", "alice")
    single = [{"question_id": "pick", "title": "Pick", "prompt": "Which one?", "multi_select": False,
               "options": [{"option_id": "a", "label": "A", "description": "a"},
                           {"option_id": "b", "label": "B", "description": "b"}]}]
    body = ok(db, "ask", SYSTEM, {"session_id": session, "questions": single})
    pending_id = body["pending_id"]
    shown = ok(db, "get_bundle", user("alice"), {"pending_id": pending_id})
    assert shown["questions"][0]["multi_select"] is False, shown
    two = [{"question_id": "pick", "selected_options": ["a", "b"]}]
    refused = expect_error(db, 400, "answers[0].selected_options: question \"pick\" takes at most one option, got 2",
                           "resolve_bundle", user("alice"), {"pending_id": pending_id, "answers": two})
    assert refused == {"error": 'answers[0].selected_options: question "pick" takes at most one option, got 2'}
    won = ok(db, "resolve_bundle", user("alice"),
             {"pending_id": pending_id, "answers": [{"question_id": "pick", "selected_options": ["b", "b"]}]})
    assert won["response"]["answers"][0]["selected_options"] == ["b"], won
    none = ok(db, "ask", SYSTEM, {"session_id": session, "questions": single})["pending_id"]
    assert ok(db, "resolve_bundle", user("alice"), {"pending_id": none, "answers": [{"question_id": "pick"}]})["claimed"]
    expect_error(db, 400, "on_expire.answers[0].selected_options", "ask", SYSTEM,
                 {"session_id": session, "questions": single, "expires_in_ms": 60_000,
                  "on_expire": {"action": "answer", "answers": two}})
    expect_error(db, 400, "questions[0].multi_select", "ask", SYSTEM,
                 {"session_id": session, "questions": [{**single[0], "multi_select": "no"}]})


def test_history_through_the_c_abi(db):
    """LIST-12, LIST-13, WIRE-6: what alice decided is listed newest first,
    byte-equal to get_bundle, decided_by_caller hers only; bob sees none of
    it; the pending listing's cursor is refused."""
    _, session = mirror(db, "history", "alice")
    first, second = ask(db, session), ask(db, session)
    ok(db, "resolve_bundle", user("alice"), {"pending_id": first, "answers": answers("one")})
    ok(db, "cancel_bundle", SYSTEM, {"pending_id": second})
    page = ok(db, "list_settled", user("alice"), {"limit": 200})
    assert list(page) == ["bundles", "count", "next_cursor"], page
    mine = [b for b in page["bundles"] if b["pending_id"] in (first, second)]
    assert [b["pending_id"] for b in mine] == [second, first], mine
    for element in mine:
        assert element == ok(db, "get_bundle", user("alice"), {"pending_id": element["pending_id"]}), element
    assert [b["decided_by_caller"] for b in mine] == [False, True], mine
    bob = ok(db, "list_settled", user("bob"), {"limit": 200})["bundles"]
    assert not [b for b in bob if b["pending_id"] in (first, second)], bob
    ask(db, session), ask(db, session)
    pending_cursor = ok(db, "list_pending", SYSTEM, {"limit": 1})["next_cursor"]
    assert pending_cursor, "two bundles wait: the first page has a next cursor"
    expect_error(db, 400, "cursor: malformed cursor", "list_settled", user("alice"), {"cursor": pending_cursor})
    settled_cursor = ok(db, "list_settled", SYSTEM, {"limit": 1})["next_cursor"]
    assert settled_cursor, "two bundles were settled: the first page has a next cursor"
    expect_error(db, 400, "cursor: malformed cursor", "list_pending", user("alice"), {"cursor": settled_cursor})
    expect_error(db, 403, "capability not authorized", "list_settled", agent("alice"), {})


def test_webhooks_through_the_c_abi(db):
    """HOOK-1, HOOK-6: endpoints are the host's: added with a secret shown
    once, listed without it, enabled, disabled, rotated, removed; a bad URL,
    an unknown event type, an unknown id and a user are refused."""
    url = f"http://127.0.0.1:9/hook-{RUN}"
    added = ok(db, "webhook_add", SYSTEM, {"url": url, "events": ["bundle.resolved"], "allow_private": True})
    assert list(added) == ["id", "secret"], added
    secret = added["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:], validate=True)) == 32, secret
    listed = ok(db, "webhook_list", SYSTEM)
    assert list(listed) == ["webhooks"], listed
    mine = [w for w in listed["webhooks"] if w["id"] == added["id"]]
    assert len(mine) == 1, listed
    assert list(mine[0]) == ["id", "url", "events", "workspace_id", "state", "cursor", "backlog",
                             "last_error", "last_attempt_at", "next_attempt_at", "skipped_after",
                             "skipped_through", "allow_private", "links"], mine
    assert mine[0]["allow_private"] is True and mine[0]["links"] is False, mine
    assert (mine[0]["url"], mine[0]["events"], mine[0]["state"]) == (url, ["bundle.resolved"], "enabled"), mine
    assert "whsec_" not in json.dumps(listed), listed
    assert ok(db, "webhook_disable", SYSTEM, {"id": added["id"]}) == {"ok": True}
    assert ok(db, "webhook_enable", SYSTEM, {"id": added["id"]}) == {"ok": True}
    rotated = ok(db, "webhook_rotate", SYSTEM, {"id": added["id"], "overlap_ms": 1000})
    assert list(rotated) == ["id", "secret"] and rotated["secret"] != secret, rotated
    assert ok(db, "webhook_remove", SYSTEM, {"id": added["id"]}) == {"ok": True}
    # LINK-4: an endpoint for a relay, whose payloads carry answer links.
    relay = ok(db, "webhook_add", SYSTEM, {"url": url, "allow_private": True, "links": True})
    listed = ok(db, "webhook_list", SYSTEM)["webhooks"]
    assert [w["links"] for w in listed if w["id"] == relay["id"]] == [True], listed
    assert ok(db, "webhook_remove", SYSTEM, {"id": relay["id"]}) == {"ok": True}
    for op in ("webhook_enable", "webhook_disable", "webhook_remove", "webhook_rotate"):
        expect_error(db, 404, "webhook not found", op, SYSTEM, {"id": added["id"]})
    expect_error(db, 400, "url: must be an absolute http or https URL", "webhook_add", SYSTEM, {"url": "ftp://x"})
    # PROD-4: a loopback target without allow_private.
    expect_error(db, 400, "url: 127.0.0.1 is a loopback address", "webhook_add", SYSTEM, {"url": url})
    expect_error(db, 400, "events[1]", "webhook_add", SYSTEM,
                 {"url": url, "events": ["bundle.asked", "bundle.answered"], "allow_private": True})
    expect_error(db, 403, "capability not authorized", "webhook_add", user("alice"), {"url": url})
    expect_error(db, 403, "capability not authorized", "webhook_list", user("alice"))


def test_answer_links_through_the_c_abi(db):
    """LINK-1: `clarion_open`'s `public_url` is the base of the links
    `answer_link` makes; without it they are the relative `/a/<token>`."""
    _, session = mirror(db, "links", "alice")
    pending_id = ask(db, session)
    relative = ok(db, "answer_link", SYSTEM, {"pending_id": pending_id, "user_id": "alice"})
    assert list(relative) == ["url", "expires_at"] and relative["url"].startswith("/a/v1."), relative
    based = open_db(public_url="https://inbox.example.com/")
    try:
        link = ok(based, "answer_link", SYSTEM, {"pending_id": pending_id, "user_id": "alice", "ttl_ms": 60000})
        assert link["url"].startswith("https://inbox.example.com/a/v1."), link
    finally:
        LIB.clarion_close(based)
    expect_error(db, 400, "ttl_ms: must be from 60000", "answer_link", SYSTEM,
                 {"pending_id": pending_id, "user_id": "alice", "ttl_ms": 59999})
    expect_error(db, 404, "clarification request not found", "answer_link", SYSTEM,
                 {"pending_id": pending_id, "user_id": f"nobody-{RUN}"})
    assert ok(db, "rotate_link_key", SYSTEM, {"now": True}) == {"ok": True}


def test_people_through_the_c_abi(db):
    """PPL-1, PPL-1a, PPL-2: the directory and members are the host's; a
    duplicate member is a 400 naming it, an unknown workspace the 404, a
    user and an agent are refused; people names whom the caller may know
    and never an email."""
    alice, bob, carol = f"alice-{RUN}", f"bob-{RUN}", f"carol-{RUN}"
    for person in (alice, bob, carol):
        assert ok(db, "upsert_user", SYSTEM,
                  {"user_id": person, "name": person.title(), "email": f"{person}@x.org"}) == {"ok": True}
    ws = f"w-people-{RUN}"
    assert ok(db, "upsert_workspace", SYSTEM, {"id": ws, "owner_id": alice}) == {"ok": True}
    assert ok(db, "set_members", SYSTEM, {"workspace_id": ws, "members": [bob]}) == {"ok": True}
    assert ok(db, "members", SYSTEM, {"workspace_id": ws}) == {"members": [bob]}
    expect_error(db, 400, "members[2]", "set_members", SYSTEM, {"workspace_id": ws, "members": [bob, carol, bob]})
    expect_error(db, 404, "workspace not found", "set_members", SYSTEM,
                 {"workspace_id": f"nowhere-{RUN}", "members": []})
    expect_error(db, 400, "email: must contain exactly one @", "upsert_user", SYSTEM, {"user_id": alice, "email": "x"})
    for op, args in (("upsert_user", {"user_id": alice}), ("set_members", {"workspace_id": ws, "members": []}),
                     ("list_users", {}), ("delete_user", {"user_id": alice}), ("members", {"workspace_id": ws})):
        expect_error(db, 403, "capability not authorized", op, user(alice), args)
        expect_error(db, 403, "capability not authorized", op, agent(alice, "questions:read"), args)
    named = ok(db, "people", user(alice), {"user_ids": [carol, bob, alice]})
    assert named == {"people": [{"user_id": bob, "name": bob.title()}, {"user_id": alice, "name": alice.title()}]}, named
    assert "@x.org" not in json.dumps(ok(db, "people", SYSTEM, {"user_ids": [alice, bob, carol]}))
    me = ok(db, "whoami", agent(bob, "questions:read"))
    assert me == {"kind": "agent", "user_id": bob, "agent_id": "bot", "name": bob.title()}, me
    assert ok(db, "delete_user", SYSTEM, {"user_id": bob}) == {"ok": True}
    assert ok(db, "members", SYSTEM, {"workspace_id": ws}) == {"members": []}


def test_internal_error_is_500():
    """A database broken under the handle: 500, no crash, and the database's
    message stays in the log: the caller sees only a reference (REL-6)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "broken.db")
        handle = open_db("sqlite://" + path)
        connection = sqlite3.connect(path)
        connection.execute("DROP TABLE bundle_questions")
        connection.commit()
        connection.close()
        status, body = call(handle, "summary", SYSTEM)
        assert status == 500, (status, body)
        assert body["error"].startswith("internal error (ref "), body
        assert "bundle_questions" not in body["error"], body
        LIB.clarion_close(handle)


def test_thirty_two_threads_race_one_bundle(db):
    _, session = mirror(db, "race", "alice")
    for round_ in range(10):
        pending_id = ask(db, session)
        barrier = threading.Barrier(32)
        results = [None] * 32

        def racer(n):
            barrier.wait()
            if n % 4 == 3:
                results[n] = call(db, "cancel_bundle", user("alice"), {"pending_id": pending_id})
            else:
                results[n] = call(db, "resolve_bundle", user("alice"), {"pending_id": pending_id, "answers": answers(f"racer {n}")})

        threads = [threading.Thread(target=racer, args=(n,)) for n in range(32)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert all(status == 200 for status, _ in results), results
        assert sum(body["claimed"] for _, body in results) == 1, (round_, results)
        stored = ok(db, "get_bundle", user("alice"), {"pending_id": pending_id})["response"]
        for _, body in results:
            assert json.dumps(body["response"]) == json.dumps(stored), (round_, body, stored)


def main():
    db = open_db(pool_size=8)
    tests = [
        ("version and open errors", lambda: test_version_and_open_errors()),
        ("hostile requests", lambda: test_hostile_requests(db)),
        ("envelope and argument errors", lambda: test_envelope_and_argument_errors(db)),
        ("every operation", lambda: test_every_operation(db)),
        ("every error class", lambda: test_every_error_class(db)),
        ("event log", lambda: test_event_log(db)),
        ("a deadline through the C ABI", lambda: test_a_deadline_through_the_c_abi(db)),
        ("the attempt ledger through the C ABI", lambda: test_the_attempt_ledger_through_the_c_abi(db)),
        ("single-select through the C ABI", lambda: test_single_select_through_the_c_abi(db)),
        ("history through the C ABI", lambda: test_history_through_the_c_abi(db)),
        ("webhooks through the C ABI", lambda: test_webhooks_through_the_c_abi(db)),
        ("people through the C ABI", lambda: test_people_through_the_c_abi(db)),
        ("answer links through the C ABI", lambda: test_answer_links_through_the_c_abi(db)),
        ("internal error is 500", test_internal_error_is_500),
        ("32 threads race one bundle", lambda: test_thirty_two_threads_race_one_bundle(db)),
    ]
    for name, test in tests:
        test()
        print(f"ok - {name}")
    LIB.clarion_close(db)
    print(f"{len(tests)} passed")


if __name__ == "__main__":
    sys.exit(main())
