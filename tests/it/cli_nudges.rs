//! NUDGE-1, NUDGE-2, NUDGE-5 on the command line: `clarion ask
//! --remind-after AGE [--remind-every AGE] [--remind-max N]
//! --escalate-after AGE --escalate-to U,U` builds `ask`'s `reminders` and
//! `escalate`, the dependent flags need theirs, the operation's refusals
//! come back as they are, `clarion expire-due` says how many steps it
//! took, and `--text` says where the reminders and the escalation stand.

use std::process::Output;
use std::time::Duration;

use clarion::{envelope, Clock, ListRequest, Principal, Timestamp, WorkspaceUpsert};
use serde_json::{json, Value};

use crate::cli_quorum::{code, reply, stdout, SINGLE};
use crate::cli_text::clarion_at;
use crate::nudges::{ask_nudged, at, nudged, reminders, stamp};
use crate::support::*;

const SECOND: i64 = 1_000_000;
const MINUTE: i64 = 60 * SECOND;
const HOUR: i64 = 60 * MINUTE;

/// The binary with its clock at the test clock's time.
fn run(db: &TestDb, args: &[&str]) -> Output {
    clarion_at(db, Some(db.clock.now()), args)
}

/// `clarion ask` on `s-rel`, mirroring olga's workspace, with `flags`
/// added.
fn ask(db: &TestDb, flags: &[&str]) -> Output {
    let mut args = vec![
        "ask",
        "s-rel",
        "--task",
        "t-rel",
        "--workspace",
        "w-ops",
        "--owner",
        "olga",
        "--questions",
        SINGLE,
    ];
    args.extend_from_slice(flags);
    run(db, &args)
}

fn asked_id(output: &Output) -> String {
    assert_eq!(code(output), 0, "{output:?}");
    reply(output)["body"]["pending_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The text views' form of the instant `offset` after the epoch.
fn shown_at(offset: i64) -> String {
    let text = stamp(offset);
    format!("{} {} UTC", &text[..10], &text[11..19])
}

/// The `nudges` of `pending_id` as `clarion get` prints it.
fn nudges(db: &TestDb, pending_id: &str) -> Value {
    let got = run(db, &["get", pending_id]);
    assert_eq!(code(&got), 0, "{got:?}");
    reply(&got)["body"]["nudges"].clone()
}

/// A session in olga's workspace, asked on through the library.
fn team(db: &TestDb) -> String {
    db.upsert_workspace(WorkspaceUpsert::new("w-team").owner("olga"))
        .unwrap();
    session_in(db, "team", "w-team", Some(true))
}

dual_backend!(
    nudge_1_cli_flags_build_reminders_and_escalate,
    nudge_1_cli_reminders_take_the_defaults,
    nudge_1_cli_dependent_flags_need_theirs,
    nudge_1_cli_refusals_are_the_operations,
    nudge_2_cli_expire_due_says_what_it_nudged,
    nudge_5_cli_text_says_where_the_nudges_stand
);

/// NUDGE-1, NUDGE-2, PPL-6: the flags make `reminders` and `escalate`:
/// the stored bundle's first reminder is `--remind-after` after its ask,
/// the next `--remind-every` later, no more than `--remind-max`, and the
/// users of `--escalate-to` see it from `--escalate-after` on.
fn nudge_1_cli_flags_build_reminders_and_escalate(db: &TestDb) {
    let id = asked_id(&ask(
        db,
        &[
            "--remind-after",
            "90m",
            "--remind-every",
            "3h",
            "--remind-max",
            "2",
            "--escalate-after",
            "2d",
            "--escalate-to",
            "gina, hal,",
        ],
    ));
    let got = reply(&run(db, &["get", &id]))["body"].clone();
    let created = Timestamp::parse_rfc3339(got["created_at"].as_str().unwrap()).unwrap();
    let first = Timestamp::from_micros(created.as_micros() + 90 * MINUTE);
    assert_eq!(
        got["nudges"],
        json!({"reminders_sent": 0, "next_reminder_at": first.to_rfc3339(), "escalated_at": ""})
    );
    assert_eq!(created, EPOCH, "asked at the test clock's time");

    at(db, 90 * MINUTE);
    assert_eq!(nudged(db), 1, "the first reminder");
    assert_eq!(
        nudges(db, &id),
        json!({"reminders_sent": 1, "next_reminder_at": stamp(90 * MINUTE + 3 * HOUR), "escalated_at": ""})
    );
    at(db, 90 * MINUTE + 3 * HOUR);
    assert_eq!(nudged(db), 1, "the second reminder, the last");
    assert_eq!(
        nudges(db, &id),
        json!({"reminders_sent": 2, "next_reminder_at": "", "escalated_at": ""})
    );
    at(db, 48 * HOUR - 1);
    assert_eq!(nudged(db), 0);
    for user in ["gina", "hal"] {
        assert!(
            db.get_bundle(&Principal::user(user), &id).is_err(),
            "{user}"
        );
    }
    at(db, 48 * HOUR);
    assert_eq!(nudged(db), 1, "the escalation");
    assert_eq!(nudges(db, &id)["escalated_at"], json!(stamp(48 * HOUR)));
    for user in ["gina", "hal"] {
        assert!(db.get_bundle(&Principal::user(user), &id).is_ok(), "{user}");
    }

    // Without the flags, no nudges.
    let plain = asked_id(&ask(db, &[]));
    assert_eq!(nudges(db, &plain), Value::Null);
}

/// NUDGE-1: `--remind-after` alone takes the defaults: every reminder as
/// far from the last as the first is from the ask, three at most.
fn nudge_1_cli_reminders_take_the_defaults(db: &TestDb) {
    let id = asked_id(&ask(db, &["--remind-after", "2h"]));
    assert_eq!(
        nudges(db, &id),
        json!({"reminders_sent": 0, "next_reminder_at": stamp(2 * HOUR), "escalated_at": ""})
    );
    at(db, 2 * HOUR);
    assert_eq!(nudged(db), 1);
    assert_eq!(
        nudges(db, &id)["next_reminder_at"],
        json!(stamp(4 * HOUR)),
        "every = first"
    );
    at(db, 100 * HOUR);
    assert_eq!(nudged(db), 1, "only the latest due reminder");
    assert_eq!(
        nudges(db, &id),
        json!({"reminders_sent": 3, "next_reminder_at": "", "escalated_at": ""}),
        "max = 3"
    );
}

/// NUDGE-1: `--remind-every` and `--remind-max` without `--remind-after`,
/// and either escalation flag without the other, are usage errors: exit
/// 2, the missing flag named on stderr, nothing asked.
fn nudge_1_cli_dependent_flags_need_theirs(db: &TestDb) {
    for (flags, missing) in [
        (["--remind-every", "1h"], "--remind-after <AGE>"),
        (["--remind-max", "2"], "--remind-after <AGE>"),
        (["--escalate-after", "1h"], "--escalate-to <USER,USER>"),
        (["--escalate-to", "gina"], "--escalate-after <AGE>"),
    ] {
        let output = ask(db, &flags);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(code(&output), 2, "{flags:?}: {output:?}");
        assert!(stderr.contains(missing), "{flags:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{flags:?}: {output:?}");
    }
    // An age without its unit is one too.
    let bare = ask(db, &["--remind-after", "90"]);
    assert_eq!(code(&bare), 2, "{bare:?}");
    assert!(db
        .list_pending(&Principal::System, &ListRequest::default())
        .unwrap()
        .bundles
        .is_empty());
}

/// NUDGE-1: the operation checks what the flags build, and its refusal is
/// the reply (exit 5): a user named twice in `--escalate-to` is named by
/// place, a reminder sooner than a minute by its field.
fn nudge_1_cli_refusals_are_the_operations(db: &TestDb) {
    for (flags, field) in [
        (
            &["--escalate-after", "1h", "--escalate-to", "a,b,a"][..],
            "escalate.to[2]:",
        ),
        (&["--remind-after", "30s"][..], "reminders.first_after_ms"),
        (
            &["--remind-after", "1h", "--remind-max", "21"][..],
            "reminders.max",
        ),
    ] {
        let output = ask(db, flags);
        assert_eq!(code(&output), 5, "{flags:?}: {output:?}");
        let body = reply(&output);
        assert_eq!(body["status"], json!(400), "{body}");
        assert!(
            body["body"]["error"].as_str().unwrap().starts_with(field),
            "{flags:?}: {body}"
        );
    }
    assert!(db
        .list_pending(&Principal::System, &ListRequest::default())
        .unwrap()
        .bundles
        .is_empty());
}

/// NUDGE-2: `clarion expire-due` replies `{"settled", "nudged"}`, and
/// `--text` says both. The process keeps the system clock, days after the
/// test clock's: a bundle asked then with a one-minute reminder is due for
/// it, one with a one-minute deadline due to settle.
fn nudge_2_cli_expire_due_says_what_it_nudged(db: &TestDb) {
    let session = team(db);
    let reminded = ask_nudged(db, &session, Some(reminders(60, 60, 3)), None, None);
    let output = clarion_at(db, None, &["expire-due"]);
    assert_eq!(code(&output), 0, "{output:?}");
    assert_eq!(
        reply(&output)["body"],
        json!({"settled": 0, "nudged": 1}),
        "{output:?}"
    );
    assert_eq!(
        envelope::bundle_detail(&db.get_bundle(&Principal::System, &reminded).unwrap()).body
            ["nudges"]["reminders_sent"],
        json!(3),
        "the latest due reminder, the third"
    );

    ask_nudged(db, &session, Some(reminders(60, 60, 3)), None, None);
    let mut due = ask_request(&session, 1);
    due.expires = Some(clarion::Expiry::In(Duration::from_secs(60)));
    db.ask(&due).unwrap();
    let output = clarion_at(db, None, &["expire-due", "--text"]);
    assert_eq!(code(&output), 0, "{output:?}");
    assert_eq!(
        stdout(&output),
        "1 bundle settled, 1 reminder or escalation sent\n"
    );
    let output = clarion_at(db, None, &["expire-due", "--text"]);
    assert_eq!(
        stdout(&output),
        "0 bundles settled, 0 reminders or escalations sent\n"
    );
}

/// NUDGE-5: `ask --text` says when the first reminder comes; `get --text`
/// how many were sent, when the next comes while the bundle waits, and
/// when it was escalated; a bundle without nudges has no such line.
fn nudge_5_cli_text_says_where_the_nudges_stand(db: &TestDb) {
    let asked = ask(
        db,
        &[
            "--remind-after",
            "1m",
            "--escalate-after",
            "90s",
            "--escalate-to",
            "gina",
            "--text",
        ],
    );
    assert_eq!(code(&asked), 0, "{asked:?}");
    let shown = stdout(&asked);
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(
        lines[1],
        format!("  First reminder {} (in 1 min)", shown_at(MINUTE)),
        "{shown}"
    );
    assert_eq!(lines[2], "  target: Target (choose one)", "{shown}");
    let id = lines[0].split(' ').next().unwrap().to_owned();

    at(db, 2 * MINUTE + 30 * SECOND);
    assert_eq!(nudged(db), 2, "the second reminder and the escalation");
    let line = |shown: &str| -> Option<String> {
        shown
            .lines()
            .find(|line| line.contains("eminded") || line.contains("eminder"))
            .map(str::to_owned)
    };
    let shown = stdout(&run(db, &["get", &id, "--text"]));
    assert_eq!(
        line(&shown).as_deref(),
        Some(
            format!(
                "  Reminded twice; next reminder {} (in 30 s); escalated at {}",
                shown_at(3 * MINUTE),
                shown_at(90 * SECOND)
            )
            .as_str()
        ),
        "{shown}"
    );
    let listed = stdout(&run(db, &["list", "--as", "user:gina", "--text"]));
    assert_eq!(line(&listed), line(&shown), "{listed}");

    // Settled: no next reminder.
    let cancelled = run(db, &["cancel", &id]);
    assert_eq!(code(&cancelled), 0, "{cancelled:?}");
    let shown = stdout(&run(db, &["get", &id, "--text"]));
    assert_eq!(
        line(&shown).as_deref(),
        Some(format!("  Reminded twice; escalated at {}", shown_at(90 * SECOND)).as_str()),
        "{shown}"
    );

    let plain = asked_id(&ask(db, &[]));
    let shown = stdout(&run(db, &["get", &plain, "--text"]));
    assert_eq!(line(&shown), None, "{shown}");
}
