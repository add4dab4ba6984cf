//! OPS-1, OPS-1a: the README's first command runs the whole flow and says
//! what happens in words; `--json` adds each step's envelope.

use std::process::{Command, Output};

use serde_json::Value;

fn demo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clarion"))
        .arg("demo")
        .args(args)
        .env_remove("CLARION_DATABASE_URL")
        .output()
        .unwrap()
}

fn succeeded(output: &Output) -> String {
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}

/// Whether `text` holds something shaped like a requirement id (`ACT-1`,
/// `OPS-1a`): capitals, a dash, a digit.
fn cites_an_id(text: &str) -> Option<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|word| {
            word.split_once('-').is_some_and(|(letters, rest)| {
                (2..=6).contains(&letters.len())
                    && letters.chars().all(|c| c.is_ascii_uppercase())
                    && rest.starts_with(|c: char| c.is_ascii_digit())
            })
        })
}

/// OPS-1, OPS-1a: numbered sentences, the questions with their options
/// one per line, every outcome in words; no requirement id, no bundle id
/// and no line over 100 characters.
#[test]
fn ops_1a_demo_in_words_no_ids_lines_at_most_100() {
    for args in [&[][..], &["--text"][..]] {
        let text = succeeded(&demo(args));
        for line in text.lines() {
            assert!(line.chars().count() <= 100, "too long: {line:?}");
            assert!(
                !line.contains('{'),
                "an envelope in the narration: {line:?}"
            );
        }
        assert_eq!(cites_an_id(&text), None, "{text}");
        assert!(!text.contains("pending_id"), "{text}");
        let steps: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        assert_eq!(steps.len(), 8, "{text}");
        for (n, step) in steps.iter().enumerate() {
            assert!(step.starts_with(&format!("{}. ", n + 1)), "{step}");
        }
        for words in [
            "The agent asks two questions and waits for the answer:",
            "     Session store: Where should login sessions live? (choose one)\n       - Redis: Fast, shared by every process\n       - PostgreSQL: One less service to run",
            "Alice opens her inbox: 1 request waiting",
            "Alice answers: Session store: PostgreSQL (\"keep it simple\"); Lifetime: Thirty days. It",
            "It loses: it is told what",
            "The agent receives the answer (answered): Session store: PostgreSQL",
            "Bob, who does not own the workspace, sees no requests, and asking for this one by its",
            "nothing is pending any more",
        ] {
            assert!(text.contains(words), "missing {words:?} in:\n{text}");
        }
    }
}

/// OPS-1a: `--json` prints each step's envelope as one compact JSON reply
/// under it: the ask, the page, the won and the lost resolve, the agent's
/// wait, bob's empty page and not-found.
#[test]
fn ops_1a_demo_json_prints_envelopes() {
    let text = succeeded(&demo(&["--json"]));
    let replies: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("   {"))
        .map(|json| serde_json::from_str(&format!("{{{json}")).unwrap())
        .collect();
    let bodies: Vec<&Value> = replies.iter().map(|reply| &reply["body"]).collect();
    assert_eq!(bodies[3]["created"], Value::Bool(true), "{text}");
    assert_eq!(bodies[4]["count"], 1);
    assert_eq!(bodies[5]["claimed"], Value::Bool(true));
    assert_eq!(bodies[6]["claimed"], Value::Bool(false));
    assert_eq!(bodies[6]["response"], bodies[5]["response"]);
    assert_eq!(bodies[7]["outcome"], "answered");
    assert_eq!(bodies[7]["response"], bodies[5]["response"]);
    assert_eq!(bodies[8]["count"], 0);
    assert_eq!(replies[9]["status"], 404);
    assert_eq!(bodies[10]["has_pending"], Value::Bool(false));
}

/// OPS-1b: `--json` and `--text` together are a usage error.
#[test]
fn ops_1b_demo_json_and_text_together_exit_2() {
    let output = demo(&["--json", "--text"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
}
