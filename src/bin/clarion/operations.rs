//! The subcommands that perform an operation (`list`, `get`, `answer`,
//! `reject`, `cancel`, `summary`, `ask`, `deliveries`, `ack`, `prune`,
//! `webhook …`, `user …`, `members …`, `whoami`), made from the
//! operations' declarations: each declaration names its subcommands
//! ([`Operation::cli`]), and their flags are its arguments as
//! its published schema describes them (type, help, required), so a new
//! argument is on the command line with nothing written here. The
//! arguments go through the WIRE-5 JSON call (`Clarion::call_value`), so
//! the command line answers exactly what the C ABI and a REST host would.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use clarion::envelope::{self, Envelope};
use clarion::{
    Channel, Clarion, CliArg, CliCommand, CliValue, OpenError, Operation, Principal, PropertyKind,
    Timestamp, WaitOutcome,
};
use serde_json::{json, Map, Value};

use crate::mirroring::MirrorArgs;
use crate::nudges::NudgeFlags;
use crate::quorum::QuorumFlags;
use crate::readable::{self, answers_in_words, clean, Seen};
use crate::{exit_code, parse_age};

fn spelling<'c>(command: &'c CliCommand, name: &str) -> Option<&'c CliArg> {
    command.args.iter().find(|arg| arg.arg == name)
}

/// The flags every operation's subcommand shares: where and as whom.
fn target_args(command: Command) -> Command {
    command
        .arg(
            Arg::new("database_url")
                .long("database-url")
                .env("CLARION_DATABASE_URL")
                .default_value("./clarion.db")
                .value_name("URL")
                .help("SQLite path or URL (`sqlite:///abs/path`), or a PostgreSQL URL."),
        )
        .arg(
            Arg::new("as")
                .long("as")
                .default_value("system")
                .value_name("PRINCIPAL")
                .value_parser(|text: &str| text.parse::<Principal>())
                .help("Who is calling: system, user:<id>, agent:<user>/<agent>:<grant,...>, unclassified."),
        )
        .arg(
            Arg::new("text")
                .long("text")
                .action(ArgAction::SetTrue)
                .conflicts_with("json")
                .help("Readable text instead of JSON."),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("The reply as JSON, `{\"status\", \"body\"}` (the default)."),
        )
}

/// `clarion ask`'s own flags (OPS-1b): what to mirror first, as `clarion
/// mcp --ask-in` does, the quorum (QUO-1), reminders and escalation
/// (NUDGE-1) as flat flags, and how long to wait as the asking agent.
fn asking_args(command: Command) -> Command {
    // The flattened flags' structs would otherwise lend `ask` a doc line.
    let about = command.get_about().cloned();
    let command =
        NudgeFlags::augment_args(QuorumFlags::augment_args(MirrorArgs::augment_args(command)));
    // LINK-4: `--link-for USER [--qr]`.
    let command = crate::links::ask_args(command);
    let command = match about {
        Some(about) => command.about(about),
        None => command,
    };
    command.arg(
        Arg::new("wait")
            .long("wait")
            .value_name("AGE")
            .value_parser(parse_age)
            .help(
                "Then wait this long for the outcome, as the asking agent (30s, 10m, 2h); exit \
                 0 answered, rejected or cancelled, 4 expired, superseded or detached, 7 timed \
                 out (which detaches the bundle: a later answer goes to the outbox).",
            ),
    )
}

/// The command line's own help for an argument given as an age: the
/// argument is in milliseconds on the wire, but the flag takes an age with
/// its unit, which its help must say.
const AGE_HELP: &[(&str, &str)] = &[
    (
        "expires_in_ms",
        "A deadline this long after the ask, 1s to 30d: an age with its unit \
         (90s, 10m, 2h; ms, s, m, h or d). Not with `expires_at`.",
    ),
    (
        "older_than_ms",
        "How long ago a bundle must have stopped being active to be deleted: an age with its \
         unit (30d, 12h; ms, s, m, h or d).",
    ),
    (
        "ttl_ms",
        "How long the link lasts, 1m to 7d (a day by default): an age with its unit (90m, \
         2h, 7d). Its answers end at the bundle's deadline if that comes first.",
    ),
    (
        "overlap_ms",
        "How long the old secret signs beside the new one: an age with its unit (24h, the \
         default; ms, s, m, h or d).",
    ),
];

/// An argument's help as the command line says it: each `argument` the
/// subcommand takes named by its flag (`--expires-at`) or its place
/// (`PENDING_ID`), and an age's help in ages.
fn help_text(
    operation: Operation,
    command: &CliCommand,
    name: &str,
    description: &str,
    age: bool,
) -> String {
    let mut help = match AGE_HELP.iter().find(|(arg, _)| *arg == name) {
        Some((_, help)) if age => (*help).to_owned(),
        _ if age => {
            format!("{description} Given as an age with its unit: 500ms, 90s, 10m, 2h, 30d.")
        }
        _ => description.to_owned(),
    };
    for property in operation.properties() {
        let name = property.name.as_str();
        if command.skip.contains(&name) || command.fixed.iter().any(|(fixed, _)| *fixed == name) {
            continue;
        }
        let spelt = match spelling(command, name) {
            Some(CliArg { flag: "", .. }) => name.to_uppercase(),
            Some(CliArg { flag, .. }) => format!("--{flag}"),
            None => format!("--{}", name.replace('_', "-")),
        };
        help = help.replace(&format!("`{name}`"), &spelt);
    }
    help
}

/// The pairs of arguments the operation's schema says are not given
/// together: on the command line, flags that conflict (a usage error,
/// exit 2). The schema says it either as `"not": {"required": [a, b]}`
/// or as `"if": {"required": [a]}, "then"` b is empty or `null`; at its
/// root or in an `allOf`.
fn exclusive_pairs(operation: Operation) -> Vec<(String, String)> {
    let Some(schema) = operation.args_schema() else {
        return Vec::new();
    };
    let names = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|name| name.as_str().map(str::to_owned))
            .collect()
    };
    let not_given = |value: &Value| {
        let choices = value["anyOf"].as_array().cloned().unwrap_or_default();
        !choices.is_empty()
            && choices
                .iter()
                .all(|choice| choice["type"] == "null" || choice["const"] == "")
    };
    let mut rules = vec![&schema];
    rules.extend(schema["allOf"].as_array().into_iter().flatten());
    let mut pairs = Vec::new();
    for rule in rules {
        if let [a, b] = names(&rule["not"]["required"]).as_slice() {
            pairs.push((a.clone(), b.clone()));
        }
        if let [a] = names(&rule["if"]["required"]).as_slice() {
            for (b, then) in rule["then"]["properties"].as_object().into_iter().flatten() {
                if not_given(then) {
                    pairs.push((a.clone(), b.clone()));
                }
            }
        }
    }
    pairs
}

fn subcommand(operation: Operation, command: &CliCommand) -> Command {
    let mut built = Command::new(command.name).about(command.about);
    let exclusive = exclusive_pairs(operation);
    for property in operation.properties() {
        let name = property.name.as_str();
        if command.skip.contains(&name) || command.fixed.iter().any(|(fixed, _)| *fixed == name) {
            continue;
        }
        let spelt = spelling(command, name);
        let age = spelt.is_some_and(|spelt| spelt.value == CliValue::Age);
        let mut arg = Arg::new(property.name.clone())
            .help(help_text(
                operation,
                command,
                name,
                &property.description,
                age,
            ))
            .value_name(property.name.to_uppercase());
        for (a, b) in &exclusive {
            let present = |other: &str| {
                !command.skip.contains(&other)
                    && !command.fixed.iter().any(|(fixed, _)| *fixed == other)
            };
            if a == name && present(b) {
                arg = arg.conflicts_with(b.clone());
            }
        }
        let list = spelt.is_some_and(|spelt| spelt.value == CliValue::List);
        arg = match spelt {
            // A positional list takes the rest of the words, maybe none
            // (`members set W`: no members).
            Some(CliArg { flag: "", .. }) if list => arg.num_args(0..).action(ArgAction::Append),
            Some(CliArg { flag: "", .. }) => arg.required(true),
            Some(CliArg { flag, .. }) => arg.long(*flag),
            None => arg.long(property.name.replace('_', "-")),
        };
        if spelt.is_none_or(|spelt| !spelt.flag.is_empty()) && property.required {
            arg = arg.required(true);
        }
        let positional = spelt.is_some_and(|spelt| spelt.flag.is_empty());
        arg = match property.kind {
            _ if age => arg.value_name("AGE").value_parser(parse_age),
            _ if list && positional => arg,
            _ if list => arg.value_name("WORD,WORD"),
            PropertyKind::Flag => arg.action(ArgAction::SetTrue),
            PropertyKind::Integer => arg.value_parser(clap::value_parser!(i64)),
            PropertyKind::Json => arg.value_name("JSON"),
            PropertyKind::Text if !property.words.is_empty() => arg.value_parser(
                clap::builder::PossibleValuesParser::new(property.words.clone()),
            ),
            PropertyKind::Text => arg,
        };
        built = built.arg(arg);
    }
    if operation == Operation::Ask {
        built = asking_args(built);
    }
    let built = target_args(built);
    match operation {
        // LINK-4: `--qr`, `--public-url`; the URL alone by default.
        Operation::AnswerLink => crate::links::link_args(built),
        _ => built,
    }
}

/// Every operation's subcommands; those of a group (`webhook`) under a
/// command of that name, beside the binary's own `extra` subcommands of
/// the group.
pub fn commands(extra: Vec<(&'static str, Command)>) -> Vec<Command> {
    let mut top = Vec::new();
    let mut groups: Vec<(&'static str, Vec<Command>)> = Vec::new();
    let mut add = |group: &'static str, command: Command| {
        if group.is_empty() {
            top.push(command);
        } else if let Some((_, commands)) = groups.iter_mut().find(|(name, _)| *name == group) {
            commands.push(command);
        } else {
            groups.push((group, vec![command]));
        }
    };
    for operation in Operation::all() {
        for command in operation.cli() {
            add(command.group, subcommand(operation, command));
        }
    }
    for (group, command) in extra {
        add(group, command);
    }
    for (group, commands) in groups {
        // A group named like a command of its own (`members W` beside
        // `members set W USER…`) is that command with subcommands.
        if let Some(command) = top.iter_mut().find(|command| command.get_name() == group) {
            *command = std::mem::take(command)
                .args_conflicts_with_subcommands(true)
                .subcommand_negates_reqs(true)
                .subcommands(commands);
        } else {
            top.push(
                Command::new(group)
                    .about(group_about(group))
                    .subcommand_required(true)
                    .subcommands(commands),
            );
        }
    }
    top
}

/// What a group of subcommands is for, in `clarion --help`.
fn group_about(group: &str) -> String {
    match group {
        "webhook" => "Manage the webhook endpoints, test them, and deliver to them.".to_owned(),
        "mail" => "How the mail worker stands: what it sent and dropped.".to_owned(),
        "user" => "Manage the directory of people (names and email addresses).".to_owned(),
        _ => format!("The {group} subcommands."),
    }
}

/// Whether `name` is a group of subcommands (`webhook`).
pub fn is_group(name: &str) -> bool {
    Operation::all().any(|operation| operation.cli().iter().any(|command| command.group == name))
}

/// The operation subcommand `name` (of `group`, `""` for none) performs,
/// if it is one.
pub fn find(group: &str, name: &str) -> Option<(Operation, &'static CliCommand)> {
    Operation::all().find_map(|operation| {
        operation
            .cli()
            .iter()
            .find(|command| command.group == group && command.name == name)
            .map(|command| (operation, command))
    })
}

/// The WIRE-5 arguments the subcommand's matches give.
fn arguments(
    operation: Operation,
    command: &CliCommand,
    matches: &ArgMatches,
) -> Result<Value, String> {
    let mut args = Map::new();
    for property in operation.properties() {
        let name = property.name.as_str();
        if let Some((_, value)) = command.fixed.iter().find(|(fixed, _)| *fixed == name) {
            args.insert(property.name.clone(), Value::Bool(*value));
            continue;
        }
        if command.skip.contains(&name) {
            continue;
        }
        let spelt = spelling(command, name);
        if spelt.is_some_and(|spelt| spelt.value == CliValue::Age) {
            if let Some(ms) = matches.get_one::<u64>(name) {
                args.insert(property.name.clone(), json!(ms));
            }
            continue;
        }
        if spelt.is_some_and(|spelt| spelt.value == CliValue::List && spelt.flag.is_empty()) {
            let words: Vec<&String> = matches
                .get_many::<String>(name)
                .map(Iterator::collect)
                .unwrap_or_default();
            args.insert(property.name.clone(), json!(words));
            continue;
        }
        if spelt.is_some_and(|spelt| spelt.value == CliValue::List) {
            if let Some(words) = matches.get_one::<String>(name) {
                let words: Vec<&str> = words
                    .split(',')
                    .map(str::trim)
                    .filter(|word| !word.is_empty())
                    .collect();
                args.insert(property.name.clone(), json!(words));
            }
            continue;
        }
        let value = match property.kind {
            PropertyKind::Flag => matches.get_flag(name).then_some(Value::Bool(true)),
            PropertyKind::Integer => matches.get_one::<i64>(name).map(|n| json!(n)),
            PropertyKind::Text => matches.get_one::<String>(name).map(|text| json!(text)),
            PropertyKind::Json => match matches.get_one::<String>(name) {
                None => None,
                Some(text) => Some(serde_json::from_str(text).map_err(|error| {
                    let flag = spelt.map_or(name.replace('_', "-"), |spelt| spelt.flag.to_owned());
                    format!("--{flag} is not valid JSON: {error}")
                })?),
            },
        };
        if let Some(value) = value {
            args.insert(property.name.clone(), value);
        }
    }
    Ok(Value::Object(args))
}

/// Performs the subcommand's operation and prints its reply.
pub fn run(operation: Operation, command: &CliCommand, matches: &ArgMatches) -> ExitCode {
    let spelt = command.spelt();
    let name = spelt.as_str();
    let mut args = match arguments(operation, command, matches) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("clarion {name}: {message}");
            return ExitCode::from(5);
        }
    };
    if operation == Operation::Ask {
        let flags = QuorumFlags::from_arg_matches(matches).unwrap_or_else(|error| error.exit());
        if let Some(quorum) = flags.argument() {
            args["quorum"] = quorum;
        }
        let nudges = NudgeFlags::from_arg_matches(matches).unwrap_or_else(|error| error.exit());
        if let Some(reminders) = nudges.reminders() {
            args["reminders"] = reminders;
        }
        if let Some(escalate) = nudges.escalate() {
            args["escalate"] = escalate;
        }
    }
    let database_url = matches
        .get_one::<String>("database_url")
        .cloned()
        .unwrap_or_default();
    let principal = matches
        .get_one::<Principal>("as")
        .cloned()
        .unwrap_or(Principal::System);
    let public_url = crate::links::public_url(matches);
    let (clarion, now) = match open(&database_url, public_url) {
        // AUD-4: the command line's attempts record `cli`.
        Ok((clarion, now)) => (clarion.via(Channel::Cli), now),
        Err(error) => {
            eprintln!("clarion {name}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let text = matches.get_flag("text");
    let code = if operation == Operation::Ask && principal == Principal::System {
        ask(&clarion, &args, matches, text, now)
    } else if operation == Operation::AnswerLink {
        // LINK-4: the URL is what `clarion link` is for: alone on its line
        // by default, the JSON reply under `--json`.
        let reply = call(&clarion, operation, &principal, &args);
        let output = match (text, matches.get_flag("json")) {
            (true, _) => crate::links::Output::Text,
            (_, true) => crate::links::Output::Json,
            _ => crate::links::Output::Url,
        };
        let user_id = args["user_id"].as_str().unwrap_or_default();
        let qr = crate::links::qr(matches);
        crate::links::print(name, &reply, output, user_id, qr, now);
        exit_code(reply.status)
    } else {
        let reply = call(&clarion, operation, &principal, &args);
        if text && reply.status == 200 {
            // The views of a reply about one bundle name its options by
            // their labels: the bundle, read after, as the caller sees it.
            let about = match operation.body_name().as_deref() {
                // A vote recorded (QUO-3) has no response yet: the bundle
                // is the one the command named.
                Some("Resolved") => reply.body["response"]["pending_id"]
                    .as_str()
                    .or(args["pending_id"].as_str()),
                _ if operation == Operation::Attempts => args["pending_id"].as_str(),
                _ => None,
            };
            let bundle = about
                .map(|id| {
                    call(
                        &clarion,
                        Operation::GetBundle,
                        &principal,
                        &json!({"pending_id": id}),
                    )
                })
                .filter(|detail| detail.status == 200)
                .map(|detail| detail.body);
            let seen = Seen {
                now,
                caller: &principal,
                bundle: bundle.as_ref(),
            };
            println!("{}", readable::render(operation, &reply.body, &seen));
        } else {
            print_reply(name, &reply, text);
        }
        exit_code(reply.status)
    };
    // REL-7: the ledger's appender writes what it holds before the exit.
    clarion.close();
    code
}

/// Opens the database, and the time the views count from. With the
/// `test-hooks` feature only, `CLARION_TEST_NOW` (RFC 3339) stops this
/// process's clock at that instant, so the tests' text views and the times
/// they write are the same on every run and backend.
fn open(database_url: &str, public_url: Option<&str>) -> Result<(Clarion, Timestamp), OpenError> {
    let mut builder = crate::database::builder(database_url);
    if let Some(url) = public_url {
        builder = builder.public_url(url);
    }
    #[cfg(feature = "test-hooks")]
    if let Some(at) = std::env::var("CLARION_TEST_NOW")
        .ok()
        .and_then(|text| Timestamp::parse_rfc3339(&text))
    {
        let clock = std::sync::Arc::new(clarion::ManualClock::new(at));
        return Ok((builder.clock(clock).open()?, at));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_micros() as i64);
    Ok((builder.open()?, Timestamp::from_micros(now)))
}

fn call(clarion: &Clarion, operation: Operation, principal: &Principal, args: &Value) -> Envelope {
    clarion.call_value(&json!({
        "op": operation.as_str(),
        "principal": principal.to_wire(),
        "args": args,
    }))
}

/// Prints a reply as JSON or, under `--text`, a refusal on stderr (a
/// successful reply's text view is [`readable::render`]'s).
fn print_reply(name: &str, reply: &Envelope, text: bool) {
    if !text {
        println!("{}", reply.to_reply());
    } else {
        eprintln!(
            "clarion {name}: {} ({})",
            reply.body["error"].as_str().unwrap_or_default(),
            reply.status
        );
    }
}

/// `clarion ask` (OPS-1b): mirror what `--task`, `--workspace` and
/// `--owner` name, ask, print the ids, and with `--wait` wait as the
/// asking agent and print the outcome.
fn ask(
    clarion: &Clarion,
    args: &Value,
    matches: &ArgMatches,
    text: bool,
    now: Timestamp,
) -> ExitCode {
    let session_id = args["session_id"].as_str().unwrap_or_default();
    let mirror = MirrorArgs::from_arg_matches(matches).unwrap_or_else(|error| error.exit());
    if let Err(error) = mirror.mirror(clarion, session_id) {
        let refused = envelope::error(&error);
        print_reply("ask", &refused, text);
        return exit_code(refused.status);
    }
    let reply = call(clarion, Operation::Ask, &Principal::System, args);
    let pending_id = reply.body["pending_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if reply.status != 200 || !text {
        print_reply("ask", &reply, text);
    } else {
        print_asked(clarion, &pending_id, &reply.body, now);
    }
    if reply.status != 200 {
        return exit_code(reply.status);
    }
    // LINK-4: the bundle is asked either way; a link that cannot be made
    // (the person does not see it) exits with its refusal, before any wait.
    if let Some(user_id) = matches.get_one::<String>("link_for") {
        let link = call(
            clarion,
            Operation::AnswerLink,
            &Principal::System,
            &json!({"pending_id": pending_id, "user_id": user_id}),
        );
        let output = match text {
            true => crate::links::Output::Text,
            false => crate::links::Output::Json,
        };
        crate::links::print(
            "ask",
            &link,
            output,
            user_id,
            crate::links::qr(matches),
            now,
        );
        if link.status != 200 {
            return exit_code(link.status);
        }
    }
    let Some(wait_ms) = matches.get_one::<u64>("wait") else {
        return ExitCode::SUCCESS;
    };
    if text {
        println!("waiting up to {} for the answer…", age_words(*wait_ms));
    }
    match clarion.wait(&pending_id, Duration::from_millis(*wait_ms)) {
        Ok(outcome) => {
            if text {
                println!("{}", outcome_in_words(clarion, &pending_id, &outcome));
            } else {
                println!("{}", envelope::waited(&outcome).to_reply());
            }
            ExitCode::from(match outcome {
                WaitOutcome::Answered(_) | WaitOutcome::Rejected(_) | WaitOutcome::Cancelled(_) => {
                    0
                }
                WaitOutcome::Expired | WaitOutcome::Superseded | WaitOutcome::Detached => 4,
                WaitOutcome::TimedOut => 7,
            })
        }
        Err(error) => {
            let refused = envelope::error(&error);
            print_reply("ask", &refused, text);
            exit_code(refused.status)
        }
    }
}

/// `clarion ask --text`: the id, then each question's id with its option
/// ids and labels, one per line (the ids an answer names), and the
/// deadline with what it does, if there is one, what a quorum needs, and
/// when the first reminder comes.
fn print_asked(clarion: &Clarion, pending_id: &str, body: &Value, now: Timestamp) {
    let created = if body["created"] == Value::Bool(true) {
        "asked"
    } else {
        "already asked with this idempotency key"
    };
    println!("{pending_id} ({created})");
    let detail = call(
        clarion,
        Operation::GetBundle,
        &Principal::System,
        &json!({"pending_id": pending_id}),
    );
    if let Some(line) = readable::deadline(&detail.body, now) {
        println!("  {line}");
    }
    if let Some(line) = readable::quorum_needs(&detail.body) {
        println!("  {line}");
    }
    if let Some(line) = readable::nudges_line(&detail.body, now) {
        println!("  {line}");
    }
    let Ok(detail) = clarion.get_bundle(&Principal::System, pending_id) else {
        return;
    };
    for question in &detail.bundle.questions {
        let how = if question.multi_select {
            "choose any"
        } else {
            "choose one"
        };
        println!(
            "  {}: {} ({how})",
            clean(&question.question_id),
            clean(&question.title)
        );
        for option in &question.options {
            println!(
                "      {}  {}",
                clean(&option.option_id),
                clean(&option.label)
            );
        }
    }
}

/// How a wait ended, in words, with the answers' labels.
fn outcome_in_words(clarion: &Clarion, pending_id: &str, outcome: &WaitOutcome) -> String {
    let Some(response) = outcome.response() else {
        return match outcome {
            WaitOutcome::Expired => "expired: its session ended or its deadline passed".to_owned(),
            WaitOutcome::Superseded => "superseded: a newer turn replaced it".to_owned(),
            WaitOutcome::Detached => "detached: the host detached the session".to_owned(),
            _ => "timed out: nobody answered in time (the bundle stays answerable; a later \
                  answer goes to the outbox)"
                .to_owned(),
        };
    };
    let words = clarion
        .get_bundle(&Principal::System, pending_id)
        .map(|detail| answers_in_words(&detail.bundle, response))
        .unwrap_or_default();
    let who = match (response.decided_by.as_str(), response.voters.as_slice()) {
        ("user", _) => "a person".to_owned(),
        ("agent", _) => "an agent".to_owned(),
        ("system", _) => "the host system".to_owned(),
        ("deadline", _) => "its deadline".to_owned(),
        // QUO-4: the voters of the deciding group.
        ("quorum", [one]) => format!("{}, for the quorum", clean(one)),
        ("quorum", voters) => {
            let voters: Vec<String> = voters.iter().map(|voter| clean(voter)).collect();
            format!("a quorum of {}", voters.join(", "))
        }
        _ => "someone (not recorded)".to_owned(),
    };
    format!("{} by {who}: {words}", outcome.as_str())
}

/// An age in milliseconds as a person says it.
fn age_words(ms: u64) -> String {
    match ms {
        ms if ms % 3_600_000 == 0 && ms > 0 => format!("{} h", ms / 3_600_000),
        ms if ms % 60_000 == 0 && ms > 0 => format!("{} min", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{} s", ms / 1_000),
        ms => format!("{ms} ms"),
    }
}
