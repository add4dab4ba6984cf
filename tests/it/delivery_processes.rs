//! WAIT-3 across processes: a waiter sees a resolution committed by another
//! OS process sharing the database (here the `clarion answer` command) —
//! no notification crosses the process boundary, so it is the poll that
//! finds it.

use std::process::Command;
use std::time::Duration;

use clarion::WaitOutcome;

use crate::support::*;

dual_backend!(wait_3_resolution_from_another_process_wakes_the_waiter);

fn wait_3_resolution_from_another_process_wakes_the_waiter(db: &TestDb) {
    let session = mirror(db, "x", "alice");
    let pending_id = ask(db, &session, 1);
    let waiting = db.reopen_polling(Duration::from_millis(50));
    let waiter = {
        let pending_id = pending_id.clone();
        std::thread::spawn(move || waiting.wait(&pending_id, Duration::from_secs(20)))
    };
    let output = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args([
            "answer",
            &pending_id,
            "--database-url",
            &db.url,
            "--as",
            "user:alice",
            "--answers",
        ])
        .arg(r#"[{"question_id":"q1","selected_options":["q1_opt1"],"custom_text":"from afar"}]"#)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let reply: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(reply["body"]["claimed"], true);
    match waiter.join().unwrap().unwrap() {
        WaitOutcome::Answered(response) => assert_eq!(response.answers[0].custom_text, "from afar"),
        other => panic!("expected the answer, got {other:?}"),
    }
}
