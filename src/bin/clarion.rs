//! The clarion command line. `clarion demo` runs the main job on a fresh
//! SQLite file; the other subcommands expose the library to operators and
//! scripts against any database URL.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use clarion::envelope::{self, Envelope};
use clarion::{
    AnswerInput, AskRequest, Clarion, OptionSpec, Principal, QuestionSpec, ResolveRequest,
    SessionUpsert,
};

#[derive(Parser)]
#[command(
    name = "clarion",
    version,
    about = "A durable \"ask a human\" inbox for agent backends"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole flow on a fresh SQLite file, narrating each step.
    Demo {
        /// Use this database instead of a fresh SQLite file.
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Answer a bundle; prints the envelope as JSON.
    Answer {
        pending_id: String,
        #[arg(long, default_value = "./clarion.db")]
        database_url: String,
        /// Who is answering: system, user:<id>, agent:<user>/<agent>:<grants>.
        #[arg(long = "as", default_value = "system")]
        principal: Principal,
        /// The answers as JSON: [{"question_id": ..., "selected_options": [...], "custom_text": ...}].
        #[arg(long)]
        answers: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command.unwrap_or(Command::Demo { database_url: None }) {
        Command::Demo { database_url } => match demo(database_url.as_deref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("clarion demo: {error}");
                ExitCode::FAILURE
            }
        },
        Command::Answer {
            pending_id,
            database_url,
            principal,
            answers,
        } => {
            let answers: Vec<AnswerInput> = match serde_json::from_str(&answers) {
                Ok(answers) => answers,
                Err(error) => {
                    eprintln!("clarion answer: --answers is not valid JSON answers: {error}");
                    return ExitCode::from(5);
                }
            };
            let clarion = match Clarion::open(&database_url) {
                Ok(clarion) => clarion,
                Err(error) => {
                    eprintln!("clarion answer: {error}");
                    return ExitCode::FAILURE;
                }
            };
            let request = ResolveRequest {
                answers,
                ..ResolveRequest::default()
            };
            let reply = match clarion.resolve_bundle(&principal, &pending_id, &request) {
                Ok(resolved) => envelope::resolved(&resolved),
                Err(error) => envelope::error(&error),
            };
            print_reply(&reply)
        }
    }
}

/// Prints the reply and maps its status to a distinct exit code.
fn print_reply(reply: &Envelope) -> ExitCode {
    println!("{}", reply.to_reply());
    ExitCode::from(match reply.status {
        200 => 0,
        404 => 3,
        409 => 4,
        400 => 5,
        403 => 6,
        _ => 1,
    })
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
    println!("   -> {}", envelope::asked(&asked).body_text());
    println!("   the agent thread now waits for the answer (WAIT-1)");
    let agent = {
        let clarion = clarion.clone();
        let pending_id = asked.pending_id.clone();
        std::thread::spawn(move || clarion.wait(&pending_id, std::time::Duration::from_secs(30)))
    };

    let alice = Principal::user("alice");
    let page = clarion.list_pending(&alice, &Default::default())?;
    println!("4. alice lists her inbox");
    println!("   -> {}", envelope::list_page(&page).body_text());

    println!("5. alice answers");
    let answer = |store: &str, ttl: &str, text: &str| ResolveRequest {
        answers: vec![
            AnswerInput {
                question_id: "store".into(),
                selected_options: vec![store.into()],
                custom_text: text.into(),
            },
            AnswerInput {
                question_id: "ttl".into(),
                selected_options: vec![ttl.into()],
                custom_text: String::new(),
            },
        ],
        ..ResolveRequest::default()
    };
    let won = clarion.resolve_bundle(
        &alice,
        &asked.pending_id,
        &answer("postgres", "month", "keep it simple"),
    )?;
    println!("   -> {}", envelope::resolved(&won).body_text());

    println!("6. a second answer arrives late: it loses and is told what won");
    let lost = clarion.resolve_bundle(
        &Principal::System,
        &asked.pending_id,
        &answer("redis", "day", ""),
    )?;
    println!("   -> {}", envelope::resolved(&lost).body_text());

    let received = agent.join().map_err(|_| "the agent thread panicked")??;
    println!(
        "7. the agent receives {:?}: {}",
        received.as_str(),
        received
            .response()
            .map(|r| envelope::response(r).to_string())
            .unwrap_or_default()
    );

    println!("8. bob, who does not own the workspace, sees nothing");
    let bob = Principal::user("bob");
    let page = clarion.list_pending(&bob, &Default::default())?;
    println!("   list -> {}", envelope::list_page(&page).body_text());
    let get = clarion.get_bundle(&bob, &asked.pending_id);
    let get = get.map_or_else(|e| envelope::error(&e), |d| envelope::bundle_detail(&d));
    println!("   get  -> {} {}", get.status, get.body_text());

    println!(
        "9. has_pending_clarification(s-1) = {}",
        clarion.has_pending_clarification("s-1")?
    );
    drop(clarion);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
