//! The attempt ledger, read (AUD-3, REL-4, REL-8): one bundle's entries
//! for whoever may see it, a deleted bundle's for `system`, prune by
//! time, and the export in keyset pages.

use clarion::Principal;
use serde_json::{json, Value};

use crate::ledger_written::{entries, ENTRY_KEYS};
use crate::support::*;

dual_backend!(
    aud_3_ordered_by_at_then_id,
    aud_3_user_needs_visibility,
    rel_4_attempts_not_found_identical_for_foreign_and_fabricated,
    aud_3_system_reads_a_deleted_bundles_entries,
    rel_8_entries_kept_after_delete_removed_by_prune,
    aud_3_export_since_inclusive_until_exclusive,
    aud_3_export_of_100k_entries_stays_under_64_mib
);

const EXPORTED: i64 = 100_000;

/// `EXPORTED` entries, written straight into the table.
fn fill_ledger(db: &TestDb) {
    let digest = "0".repeat(64);
    let rows = match db.backend() {
        clarion::Backend::Sqlite => format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {EXPORTED}) \
             INSERT INTO attempts (pending_id, at, principal_kind, user_id, agent_id, channel, \
             outcome, digest) SELECT 'b-' || i, i, 'user', 'alice', '', 'rust', 'lost', \
             '{digest}' FROM n"
        ),
        clarion::Backend::Postgres => format!(
            "INSERT INTO attempts (pending_id, at, principal_kind, user_id, agent_id, channel, \
             outcome, digest) SELECT 'b-' || i, i, 'user', 'alice', '', 'rust', 'lost', \
             '{digest}' FROM generate_series(1, {EXPORTED}) AS i"
        ),
    };
    db.raw(|conn| {
        use diesel::RunQueryDsl;
        diesel::sql_query(rows).execute(conn).unwrap();
    });
}

/// The child's peak resident memory so far, from its `/proc` status.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// AUD-3: `clarion audit export` of 100,000 entries writes every one, in
/// order, in constant memory: its own peak resident set (`VmHWM`, read
/// while it is blocked writing its last pages, 98% through) stays under
/// 64 MiB.
fn aud_3_export_of_100k_entries_stays_under_64_mib(db: &TestDb) {
    use std::io::BufRead;
    fill_ledger(db);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["audit", "export", "--database-url", &db.url])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut read = 0_i64;
    let mut last_at = String::new();
    let mut check = |line: std::io::Result<String>| {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let at = line["at"].as_str().unwrap().to_owned();
        assert!(at >= last_at, "in (at, id) order");
        last_at = at;
    };
    // The last 2,000 lines do not fit in the pipe: the child waits on it.
    for line in lines
        .by_ref()
        .take(usize::try_from(EXPORTED - 2_000).unwrap())
    {
        check(line);
        read += 1;
    }
    let peak = peak_kib(child.id());
    for line in lines {
        check(line);
        read += 1;
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(read, EXPORTED);
    assert!(peak < 64 * 1024, "peak resident {peak} KiB");
    eprintln!("audit export of {EXPORTED} entries: peak resident {peak} KiB");
}

/// AUD-3: entries come in (`at`, entry id) order: by time, and two at
/// one time in the order they were written.
fn aud_3_ordered_by_at_then_id(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &id, &one_answer("first"))
        .unwrap();
    db.resolve_bundle(&alice(), &id, &one_answer("same time"))
        .unwrap();
    db.clock.advance_micros(5_000_000);
    db.cancel_bundle(&Principal::System, &id).unwrap();
    let ledger = entries(db, &id);
    let kinds: Vec<(&str, &str)> = ledger
        .iter()
        .map(|e| (e.principal_kind.as_str(), e.outcome.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [("user", "won"), ("user", "lost"), ("system", "lost")]
    );
    assert_eq!(ledger[0].at, ledger[1].at);
    assert_eq!(
        ledger[2].at.as_micros() - ledger[1].at.as_micros(),
        5_000_000
    );
    assert_ne!(
        ledger[0].digest, ledger[1].digest,
        "each its own submission"
    );
}

/// AUD-3, 13a: a user reads the entries of a bundle it can see; agents
/// never (capability), another user gets the not-found.
fn aud_3_user_needs_visibility(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &id, &one_answer("x")).unwrap();
    assert_eq!(db.attempts(&alice(), &id).unwrap().len(), 1);
    assert!(matches!(
        db.attempts(&bob(), &id),
        Err(clarion::Error::NotFound(_))
    ));
    assert!(matches!(
        db.attempts(&alice_bot(), &id),
        Err(clarion::Error::CapabilityDenied)
    ));
}

fn attempts_call(db: &TestDb, user: &str, pending_id: &str) -> String {
    let reply = db.call_value(&json!({
        "op": "attempts",
        "principal": {"kind": "user", "user_id": user},
        "args": {"pending_id": pending_id},
    }));
    format!("{} {}", reply.status, reply.body_text())
}

/// REL-4, AUTH-5: another user's bundle and a fabricated id give the same
/// bytes, whether or not the bundle has entries.
fn rel_4_attempts_not_found_identical_for_foreign_and_fabricated(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &id, &one_answer("x")).unwrap();
    let foreign = attempts_call(db, "bob", &id);
    let fabricated = attempts_call(db, "bob", "b-fabricated");
    assert!(foreign.starts_with("404 "), "{foreign}");
    assert_eq!(foreign, fabricated);
}

/// AUD-2, AUD-3: deleting a bundle keeps its entries; `system` reads them,
/// its user no longer can; an id with neither is not-found for `system`.
fn aud_3_system_reads_a_deleted_bundles_entries(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let id = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &id, &one_answer("x")).unwrap();
    db.delete_session(&session).unwrap();
    assert!(db.get_bundle(&Principal::System, &id).is_err());
    assert_eq!(entries(db, &id).len(), 1);
    assert!(matches!(
        db.attempts(&alice(), &id),
        Err(clarion::Error::NotFound(_))
    ));
    assert!(matches!(
        db.attempts(&Principal::System, "b-never"),
        Err(clarion::Error::NotFound(_))
    ));
}

/// REL-8: entries outlive their bundle and go only with `prune`, by the
/// time they were recorded.
fn rel_8_entries_kept_after_delete_removed_by_prune(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let old = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &old, &one_answer("old"))
        .unwrap();
    db.delete_session(&session).unwrap();
    db.clock.advance_micros(3_600_000_000);
    let session = mirror(db, "b", "alice");
    let new = ask(db, &session, 1);
    db.resolve_bundle(&alice(), &new, &one_answer("new"))
        .unwrap();
    assert_eq!(entries(db, &old).len(), 1, "kept after the delete");
    db.prune(std::time::Duration::from_secs(1800)).unwrap();
    assert!(db.attempts(&Principal::System, &old).is_err(), "pruned");
    assert_eq!(entries(db, &new).len(), 1, "younger than the cutoff");
}

/// AUD-3: the export writes every entry from `since` (inclusive) to
/// `until` (exclusive), oldest first, through the library and through
/// `clarion audit export` (JSON Lines, `pending_id` first).
fn aud_3_export_since_inclusive_until_exclusive(db: &TestDb) {
    let session = mirror(db, "a", "alice");
    let mut at = Vec::new();
    let mut ids = Vec::new();
    for n in 0..3 {
        let id = ask(db, &session, 1);
        at.push(clarion::Clock::now(&*db.clock));
        db.resolve_bundle(&alice(), &id, &one_answer(&n.to_string()))
            .unwrap();
        ids.push(id);
        db.clock.advance_micros(1_000_000);
    }
    let mut exported = Vec::new();
    let count = db
        .export_attempts(Some(at[1]), Some(at[2]), |entry| {
            exported.push(entry.pending_id.clone());
            Ok(())
        })
        .unwrap();
    assert_eq!((count, exported), (1, vec![ids[1].clone()]));
    let all = db.export_attempts(None, None, |_| Ok(())).unwrap();
    assert_eq!(all, 3);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["audit", "export", "--database-url", &db.url])
        .args([
            "--since",
            &at[1].to_rfc3339(),
            "--until",
            &at[2].to_rfc3339(),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["pending_id"], json!(ids[1]));
    let keys: Vec<&String> = lines[0].as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "pending_id");
    assert_eq!(keys[1..], ENTRY_KEYS);
    assert_eq!(lines[0]["at"], json!(at[1].to_rfc3339()));
}
