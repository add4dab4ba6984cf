//! OPS-1, OPS-1a: the main job. Runs the whole flow on a fresh SQLite file
//! and says what happens, step by step, in words; `--json` adds under each
//! step the envelope a host would have received. Also the sample bundles of
//! `clarion serve --demo`.

use std::sync::mpsc;
use std::time::Duration;

use clarion::envelope::{self, Envelope};
use clarion::{
    AnswerInput, AskRequest, BundleView, Clarion, OptionSpec, Principal, QuestionSpec,
    ResolveRequest, SessionUpsert, TaskUpsert, WaitOutcome, WorkspaceUpsert,
};

use crate::readable::{answers_in_words, clean};

pub(crate) type Failure = Box<dyn std::error::Error + Send + Sync>;

/// OPS-1a: no line of the narration is longer than this.
const WIDTH: usize = 100;

fn option(id: &str, label: &str, description: &str) -> OptionSpec {
    OptionSpec {
        option_id: Some(id.to_owned()),
        label: label.to_owned(),
        description: description.to_owned(),
    }
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

fn two_questions() -> AskRequest {
    AskRequest {
        session_id: "s-1".into(),
        questions: vec![
            question(
                "store",
                "Session store",
                "Where should login sessions live?",
                vec![
                    option("redis", "Redis", "Fast, shared by every process"),
                    option("postgres", "PostgreSQL", "One less service to run"),
                ],
            ),
            question(
                "ttl",
                "Lifetime",
                "How long should a session last?",
                vec![
                    option("day", "One day", "Log in daily"),
                    option("month", "Thirty days", "Remember me"),
                ],
            ),
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

/// How the demo speaks: numbered sentences wrapped at [`WIDTH`], and with
/// `--json` each step's envelopes as compact JSON under it.
struct Narrator {
    json: bool,
    step: u32,
}

impl Narrator {
    fn say(&mut self, sentence: &str, details: &[String], envelopes: &[Envelope]) {
        self.step += 1;
        let number = format!("{}. ", self.step);
        print_wrapped(&number, &" ".repeat(number.len()), sentence);
        for detail in details {
            print_wrapped("     ", "       ", detail);
        }
        if self.json {
            for envelope in envelopes {
                println!("   {}", envelope.to_reply());
            }
        }
    }
}

/// Prints `text` in lines of at most [`WIDTH`] characters, broken at
/// spaces: the first line after `first`, the others after `rest`.
fn print_wrapped(first: &str, rest: &str, text: &str) {
    let mut line = first.to_owned();
    let mut empty = true;
    for word in text.split(' ') {
        let fits = line.chars().count() + usize::from(!empty) + word.chars().count() <= WIDTH;
        if !empty && !fits {
            println!("{line}");
            line = rest.to_owned();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    println!("{line}");
}

/// A bundle as its questions, each with its options one per line.
fn questions_of(view: &BundleView) -> Vec<String> {
    let mut lines = Vec::new();
    for question in &view.questions {
        let how = if question.multi_select {
            "choose any"
        } else {
            "choose one"
        };
        lines.push(format!(
            "{}: {} ({how})",
            clean(&question.title),
            clean(&question.prompt)
        ));
        for option in &question.options {
            lines.push(format!(
                "  - {}: {}",
                clean(&option.label),
                clean(&option.description)
            ));
        }
    }
    lines
}

/// "no requests", "1 request", "2 requests".
fn requests(count: usize) -> String {
    match count {
        0 => "no requests".to_owned(),
        1 => "1 request".to_owned(),
        n => format!("{n} requests"),
    }
}

/// The agent's side: ask, hand the reply over, wait for the answer.
fn agent(
    clarion: Clarion,
    asked: mpsc::Sender<clarion::Asked>,
) -> Result<WaitOutcome, clarion::Error> {
    let bundle = clarion.ask(&two_questions())?;
    let pending_id = bundle.pending_id.clone();
    // The main thread narrates; if it went away there is no one to tell.
    let _ = asked.send(bundle);
    clarion.wait(&pending_id, Duration::from_secs(30))
}

/// `clarion demo [--json]` (OPS-1, OPS-1a).
pub fn run(url: Option<&str>, json: bool) -> Result<(), Failure> {
    let scratch = std::env::temp_dir().join(format!("clarion-demo-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let fresh = url.is_none();
    let url = match url {
        Some(url) => url.to_owned(),
        None => format!("sqlite://{}", scratch.join("clarion.db").display()),
    };
    let clarion = Clarion::open(&url)?;
    let mut narrator = Narrator { json, step: 0 };
    println!("clarion demo: an agent asks a person two questions and waits for the answer.");
    print_wrapped(
        "Database: ",
        "  ",
        &format!(
            "{url}{}",
            if fresh {
                " (a new file, removed at the end)"
            } else {
                ""
            }
        ),
    );
    println!();

    clarion.upsert_workspace(
        WorkspaceUpsert::new("w-acme")
            .owner("alice")
            .name("Acme web"),
    )?;
    clarion.upsert_task(
        TaskUpsert::new("t-login")
            .workspace("w-acme")
            .title("Add login"),
    )?;
    clarion.upsert_session(SessionUpsert::new("s-1", "t-login").primary(true))?;
    narrator.say(
        "The host tells clarion about its world: the workspace \"Acme web\", owned by alice, \
         the task \"Add login\" in it, and the agent's session on that task.",
        &[],
        &[envelope::ok(), envelope::ok(), envelope::ok()],
    );

    let (asked, asked_reply) = mpsc::channel();
    let waiting = {
        let clarion = clarion.clone();
        std::thread::spawn(move || agent(clarion, asked))
    };
    let bundle = asked_reply.recv()?;
    let pending_id = bundle.pending_id.clone();
    let alice = Principal::user("alice");
    let view = clarion.get_bundle(&alice, &pending_id)?.bundle;
    narrator.say(
        "The agent asks two questions and waits for the answer:",
        &questions_of(&view),
        &[envelope::asked(&bundle)],
    );

    let page = clarion.list_pending(&alice, &Default::default())?;
    narrator.say(
        &format!(
            "Alice opens her inbox: {} waiting, in the task \"{}\" of \"{}\".",
            requests(page.bundles.len()),
            clean(&view.task_title),
            clean(&view.workspace_name)
        ),
        &[],
        &[envelope::list_page(&page)],
    );

    let won = clarion.resolve_bundle(
        &alice,
        &pending_id,
        &answer("postgres", "month", "keep it simple"),
    )?;
    let verdict = if won.claimed {
        "her answer is the one that counts"
    } else {
        "someone else had already answered"
    };
    narrator.say(
        &format!(
            "Alice answers: {}. It is the first answer, so {verdict}.",
            answers_in_words(&view, &won.response)
        ),
        &[],
        &[envelope::resolved(&won)],
    );

    let lost =
        clarion.resolve_bundle(&Principal::System, &pending_id, &answer("redis", "day", ""))?;
    narrator.say(
        &format!(
            "A second answer arrives late (the host, choosing Redis and One day). It {}: \
             it is told what won instead, {}, decided by {}.",
            if lost.claimed { "wins" } else { "loses" },
            answers_in_words(&view, &lost.response),
            match lost.response.decided_by.as_str() {
                "user" => "a person",
                "agent" => "an agent",
                "system" => "the host system",
                _ => "its deadline",
            }
        ),
        &[],
        &[envelope::resolved(&lost)],
    );

    let received = waiting
        .join()
        .map_err(|_| "the agent's thread panicked")??;
    let heard = match received.response() {
        Some(response) => format!(
            "The agent receives the answer ({}): {}.",
            received.as_str(),
            answers_in_words(&view, response)
        ),
        None => format!(
            "The agent's wait ends without an answer: {}.",
            received.as_str()
        ),
    };
    narrator.say(&heard, &[], &[envelope::waited(&received)]);

    let bob = Principal::user("bob");
    let bobs = clarion.list_pending(&bob, &Default::default())?;
    let looked = clarion.get_bundle(&bob, &pending_id);
    let found = looked.is_ok();
    let looked = looked.map_or_else(|e| envelope::error(&e), |d| envelope::bundle_detail(&d));
    narrator.say(
        &format!(
            "Bob, who does not own the workspace, sees {}, and asking for this one by its id \
             {}.",
            requests(bobs.bundles.len()),
            if found { "shows it" } else { "finds nothing" }
        ),
        &[],
        &[envelope::list_page(&bobs), looked],
    );

    let pending = clarion.has_pending_clarification("s-1")?;
    narrator.say(
        &format!(
            "The host checks the session: {}",
            if pending {
                "it still waits for an answer."
            } else {
                "nothing is pending any more, so the agent carries on."
            }
        ),
        &[],
        &[envelope::has_pending(pending)],
    );
    clarion.close();
    drop(clarion);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// The sample bundles of `clarion serve --demo`, one task and session
/// each: the task's title and the bundle.
fn samples() -> Vec<(&'static str, &'static str, AskRequest)> {
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
        ("login", "Add login", two_questions()),
        ("release", "Publish the parser crate", release),
        ("migrate", "Deploy release 4.2", migrate),
    ]
}

/// `clarion serve --demo`: a workspace owned by `owner` with a few sample
/// bundles waiting in it, named for people (LIFE-12). Asked with
/// idempotency keys (ASK-4), so serving the same database again adds
/// nothing.
pub fn seed(clarion: &Clarion, owner: &str) -> Result<usize, Failure> {
    clarion.upsert_workspace(
        WorkspaceUpsert::new("w-demo")
            .owner(owner)
            .name("Demo workspace"),
    )?;
    let mut created = 0;
    for (name, title, mut request) in samples() {
        let (task, session) = (format!("t-{name}"), format!("s-{name}"));
        clarion.upsert_task(TaskUpsert::new(&task).workspace("w-demo").title(title))?;
        clarion.upsert_session(SessionUpsert::new(&session, &task).primary(true))?;
        request.session_id = session;
        request.idempotency_key = Some(format!("demo-{name}"));
        if clarion.ask(&request)?.created {
            created += 1;
        }
    }
    Ok(created)
}
