//! The clarion command line. `clarion demo` runs the main job: it creates a
//! fresh SQLite database, mirrors a workspace, task and session, asks a
//! bundle, and narrates each step.

use std::process::ExitCode;

use clarion::{AskRequest, Clarion, OptionSpec, QuestionSpec, SessionUpsert};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("demo") => match demo(args.get(1).map(String::as_str)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion demo: {error}");
                ExitCode::FAILURE
            }
        },
        Some("--help") | Some("-h") | Some("help") => {
            println!("usage: clarion demo [DATABASE_URL]   (default: a fresh SQLite file)");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("clarion: unknown command {other:?}; try `clarion demo`");
            ExitCode::from(2)
        }
    }
}

fn option(id: &str, label: &str, description: &str) -> OptionSpec {
    OptionSpec {
        option_id: Some(id.to_owned()),
        label: label.to_owned(),
        description: description.to_owned(),
    }
}

fn demo(url: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let scratch = std::env::temp_dir().join(format!("clarion-demo-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let url = match url {
        Some(url) => url.to_owned(),
        None => format!("sqlite://{}", scratch.join("clarion.db").display()),
    };
    println!("1. open {url} (migrations run on open)");
    let clarion = Clarion::open(&url)?;

    println!("2. mirror workspace w-acme (owner alice), task t-login, session s-1");
    clarion.upsert_workspace("w-acme", Some("alice"))?;
    clarion.upsert_task("t-login", Some("w-acme"))?;
    clarion.upsert_session(SessionUpsert {
        id: "s-1",
        task_id: "t-login",
        state: None,
        is_primary: Some(true),
    })?;

    println!("3. the agent asks a two-question bundle");
    let asked = clarion.ask(&AskRequest {
        session_id: "s-1".into(),
        questions: vec![
            QuestionSpec {
                question_id: Some("store".into()),
                title: "Session store".into(),
                prompt: "Where should login sessions live?".into(),
                options: vec![
                    option("redis", "Redis", "Fast, shared by every process"),
                    option("postgres", "PostgreSQL", "One less service to run"),
                ],
            },
            QuestionSpec {
                question_id: Some("ttl".into()),
                title: "Lifetime".into(),
                prompt: "How long should a session last?".into(),
                options: vec![
                    option("day", "One day", "Log in daily"),
                    option("month", "Thirty days", "Remember me"),
                ],
            },
        ],
        context: "Implementing login for the acme web app".into(),
        ..AskRequest::default()
    })?;
    println!(
        "   -> {{\"pending_id\": \"{}\", \"created\": {}}}",
        asked.pending_id, asked.created
    );
    println!(
        "4. has_pending_clarification(s-1) = {}",
        clarion.has_pending_clarification("s-1")?
    );

    println!("5. the host starts a new turn: the bundle is superseded");
    clarion.begin_turn("s-1")?;
    println!(
        "   has_pending_clarification(s-1) = {}",
        clarion.has_pending_clarification("s-1")?
    );
    drop(clarion);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
