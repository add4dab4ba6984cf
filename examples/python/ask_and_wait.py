"""Ask a person one question through clarion and wait for the answer.

Run it beside `clarion serve` on the same database and answer in the
browser:

    clarion serve --database-url sqlite:///inbox.db --open-as user:alice &
    python examples/python/ask_and_wait.py sqlite:///inbox.db

The database URL is the first argument, else `CLARION_DATABASE_URL`
(SQLite `sqlite:///path` or a PostgreSQL URL). It prints
`pending <pending_id>` once the question is asked, then the outcome and
the labels of the options chosen, and exits 0 when the question was
answered (1 otherwise).
"""

import os
import sys

from clarion import Clarion

# The options offered: id (what the answer names), label, description.
OPTIONS = [
    ("today", "Ship today", "Tag and publish now."),
    ("monday", "Wait until Monday", "Someone is around to watch it."),
]
LABELS = {option_id: label for option_id, label, _ in OPTIONS}


def main() -> int:
    url = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("CLARION_DATABASE_URL", "")
    if not url:
        print("usage: ask_and_wait.py DATABASE_URL", file=sys.stderr)
        return 2
    with Clarion.open(url) as clarion:
        # The host mirrors where the question comes from: alice's workspace,
        # a task in it and the agent's session on that task. Upserts, so a
        # second run reuses them.
        clarion.upsert_workspace(id="w-release", owner_id="alice", name="Release")
        clarion.upsert_task(id="t-release", workspace_id="w-release", title="Ship 1.0")
        clarion.upsert_session(id="s-release", task_id="t-release")
        asked = clarion.ask(
            session_id="s-release",
            questions=[
                {
                    "question_id": "ship",
                    "title": "Release",
                    "prompt": "The release candidate passed its checks. Ship it?",
                    "multi_select": False,
                    "options": [
                        {"option_id": option_id, "label": label, "description": description}
                        for option_id, label, description in OPTIONS
                    ],
                }
            ],
        )
        pending_id = asked["pending_id"]
        # Flushed at once: whoever runs this learns what to answer.
        print(f"pending {pending_id}", flush=True)
        # Blocks until someone answers (or two minutes pass); the package
        # waits in short slices, so Ctrl+C and other threads are not held.
        waited = clarion.wait(pending_id=pending_id, timeout_ms=120_000)
    print(f"outcome {waited['outcome']}")
    response = waited["response"]
    if waited["outcome"] != "answered" or response is None:
        return 1
    for answer in response["answers"]:
        chosen = [LABELS.get(option, option) for option in answer["selected_options"]]
        print(f"chose {', '.join(chosen)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
