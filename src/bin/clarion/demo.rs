//! OPS-1: the main job. Runs the whole flow on a fresh SQLite file and
//! narrates every step with the envelope a host would send.

use std::sync::mpsc;
use std::time::Duration;

use clarion::envelope;
use clarion::{
    AnswerInput, AskRequest, Clarion, OptionSpec, Principal, QuestionSpec, ResolveRequest,
    SessionUpsert, TaskUpsert, WorkspaceUpsert,
};

type Failure = Box<dyn std::error::Error + Send + Sync>;

fn option(id: &str, label: &str, description: &str) -> OptionSpec {
    OptionSpec {
        option_id: Some(id.to_owned()),
        label: label.to_owned(),
        description: description.to_owned(),
    }
}

fn two_questions() -> AskRequest {
    AskRequest {
        session_id: "s-1".into(),
        questions: vec![
            QuestionSpec {
                question_id: Some("store".into()),
                title: "Session store".into(),
                prompt: "Where should login sessions live?".into(),
                multi_select: None,
                options: vec![
                    option("redis", "Redis", "Fast, shared by every process"),
                    option("postgres", "PostgreSQL", "One less service to run"),
                ],
            },
            QuestionSpec {
                question_id: Some("ttl".into()),
                title: "Lifetime".into(),
                prompt: "How long should a session last?".into(),
                multi_select: Some(false),
                options: vec![
                    option("day", "One day", "Log in daily"),
                    option("month", "Thirty days", "Remember me"),
                ],
            },
        ],
        context: "Implementing login for the acme web app".into(),
        ..AskRequest::default()
    }
}

fn answer(store: &str, ttl: &str, text: &str) -> ResolveRequest {
    ResolveRequest {
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
    }
}

/// The agent's side: ask, report the id, wait for the answer.
fn agent(clarion: Clarion, asked: mpsc::Sender<String>) -> Result<String, Failure> {
    let bundle = clarion.ask(&two_questions())?;
    println!("3. [agent] asks a two-question bundle");
    println!("   -> {}", envelope::asked(&bundle).body_text());
    println!("   [agent] waits for the answer (WAIT-1)");
    asked.send(bundle.pending_id.clone())?;
    let outcome = clarion.wait(&bundle.pending_id, Duration::from_secs(30))?;
    Ok(envelope::waited(&outcome).body_text())
}

pub fn run(url: Option<&str>) -> Result<(), Failure> {
    let scratch = std::env::temp_dir().join(format!("clarion-demo-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let url = match url {
        Some(url) => url.to_owned(),
        None => format!("sqlite://{}", scratch.join("clarion.db").display()),
    };
    println!("1. open {url} (migrations run on open)");
    let clarion = Clarion::open(&url)?;

    println!("2. mirror workspace w-acme (owner alice), task t-login, session s-1");
    clarion.upsert_workspace(WorkspaceUpsert::new("w-acme").owner("alice"))?;
    clarion.upsert_task(TaskUpsert::new("t-login").workspace("w-acme"))?;
    clarion.upsert_session(SessionUpsert::new("s-1", "t-login").primary(true))?;

    let (asked, asked_id) = mpsc::channel();
    let agent = {
        let clarion = clarion.clone();
        std::thread::spawn(move || agent(clarion, asked))
    };
    let pending_id = asked_id.recv()?;

    let alice = Principal::user("alice");
    let page = clarion.list_pending(&alice, &Default::default())?;
    println!("4. alice lists her inbox");
    println!("   -> {}", envelope::list_page(&page).body_text());

    println!("5. alice answers");
    let won = clarion.resolve_bundle(
        &alice,
        &pending_id,
        &answer("postgres", "month", "keep it simple"),
    )?;
    println!("   -> {}", envelope::resolved(&won).body_text());

    println!("6. a second answer arrives late: it loses and is told what won");
    let lost =
        clarion.resolve_bundle(&Principal::System, &pending_id, &answer("redis", "day", ""))?;
    println!("   -> {}", envelope::resolved(&lost).body_text());

    let received = agent.join().map_err(|_| "the agent thread panicked")??;
    println!("7. [agent] receives the answer");
    println!("   -> {received}");

    println!("8. bob, who does not own the workspace, sees nothing");
    let bob = Principal::user("bob");
    let page = clarion.list_pending(&bob, &Default::default())?;
    println!("   list -> {}", envelope::list_page(&page).body_text());
    let get = clarion.get_bundle(&bob, &pending_id);
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

/// A single-select question (ASK-6): its options exclude each other.
fn question(id: &str, title: &str, prompt: &str, options: Vec<OptionSpec>) -> QuestionSpec {
    QuestionSpec {
        question_id: Some(id.into()),
        title: title.into(),
        prompt: prompt.into(),
        multi_select: Some(false),
        options,
    }
}

/// The sample bundles of `clarion serve --demo`, one task and session each.
fn samples() -> Vec<(&'static str, AskRequest)> {
    let release = AskRequest {
        questions: vec![question(
            "license",
            "License",
            "Which license should the new crate carry?",
            vec![
                option("mit", "MIT", "Short and permissive"),
                option("apache", "Apache-2.0", "Permissive, with a patent grant"),
                option("dual", "MIT OR Apache-2.0", "The Rust convention"),
            ],
        )],
        context: "Publishing the parser as its own crate".into(),
        ..AskRequest::default()
    };
    let migrate = AskRequest {
        questions: vec![question(
            "migrate",
            "Run the migration?",
            "The migration adds a NOT NULL column to `orders` (12 M rows) and \
             locks the table for about 40 s.",
            vec![
                option("now", "Run it now", "Orders pause for 40 s"),
                option(
                    "tonight",
                    "Tonight at 02:00",
                    "Schedule it for the quiet hour",
                ),
            ],
        )],
        context: "Deploying release 4.2 to production".into(),
        kind: clarion::BundleKind::Permission,
        ..AskRequest::default()
    };
    vec![
        ("login", two_questions()),
        ("release", release),
        ("migrate", migrate),
    ]
}

/// `clarion serve --demo`: a workspace owned by `owner` with a few sample
/// bundles waiting in it. Asked with idempotency keys (ASK-4), so serving
/// the same database again adds nothing.
pub fn seed(clarion: &Clarion, owner: &str) -> Result<usize, Failure> {
    clarion.upsert_workspace(WorkspaceUpsert::new("w-demo").owner(owner))?;
    let mut created = 0;
    for (name, mut request) in samples() {
        let (task, session) = (format!("t-{name}"), format!("s-{name}"));
        clarion.upsert_task(TaskUpsert::new(&task).workspace("w-demo"))?;
        clarion.upsert_session(SessionUpsert::new(&session, &task).primary(true))?;
        request.session_id = session;
        request.idempotency_key = Some(format!("demo-{name}"));
        if clarion.ask(&request)?.created {
            created += 1;
        }
    }
    Ok(created)
}
