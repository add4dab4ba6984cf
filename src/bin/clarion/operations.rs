//! The subcommands that perform an operation (`list`, `get`, `answer`,
//! `reject`, `cancel`, `summary`, `ask`, `deliveries`, `ack`, `prune`),
//! made from the operations' declarations: each declaration names its
//! subcommands ([`Operation::cli`]), and their flags are its arguments as
//! its published schema describes them (type, help, required), so a new
//! argument is on the command line with nothing written here. The
//! arguments go through the WIRE-5 JSON call (`Clarion::call_value`), so
//! the command line answers exactly what the C ABI and a REST host would.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use clarion::envelope::{self, Envelope};
use clarion::{Channel, Clarion, CliArg, CliCommand, CliValue, Operation, Principal, WaitOutcome};
use serde_json::{json, Map, Value};

use crate::mirroring::MirrorArgs;
use crate::readable::{self, answers_in_words, clean};
use crate::{exit_code, parse_age};

/// A property of an operation's arguments, as the command line reads it.
struct Property {
    name: String,
    help: String,
    kind: Kind,
    required: bool,
    words: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Integer,
    Flag,
    Json,
}

/// The JSON type of a property, `null` aside.
fn kind_of(schema: &Value) -> Kind {
    let types: Vec<&str> = match &schema["type"] {
        Value::String(kind) => vec![kind.as_str()],
        Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => schema["anyOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|branch| branch["type"].as_str())
            .collect(),
    };
    match types.into_iter().find(|kind| *kind != "null") {
        Some("integer") => Kind::Integer,
        Some("boolean") => Kind::Flag,
        Some("array" | "object") => Kind::Json,
        _ => Kind::Text,
    }
}

/// The enum words a property accepts, if it lists them.
fn words_of(schema: &Value) -> Vec<String> {
    let listed = schema["enum"].as_array().or_else(|| {
        schema["anyOf"]
            .as_array()?
            .iter()
            .find_map(|branch| branch["enum"].as_array())
    });
    listed
        .into_iter()
        .flatten()
        .filter_map(|word| word.as_str().map(str::to_owned))
        .collect()
}

fn properties(operation: Operation) -> Vec<Property> {
    let schema = operation.args_schema().unwrap_or_default();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    schema["properties"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, property)| Property {
            name: name.clone(),
            help: property["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            kind: kind_of(property),
            required: required.contains(&name.as_str()),
            words: words_of(property),
        })
        .collect()
}

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
/// mcp --ask-in` does, and how long to wait as the asking agent.
fn asking_args(command: Command) -> Command {
    // The flattened flags' struct would otherwise lend `ask` its doc line.
    let about = command.get_about().cloned();
    let command = MirrorArgs::augment_args(command);
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

fn subcommand(operation: Operation, command: &CliCommand) -> Command {
    let mut built = Command::new(command.name).about(command.about);
    for property in properties(operation) {
        let name = property.name.as_str();
        if command.skip.contains(&name) || command.fixed.iter().any(|(fixed, _)| *fixed == name) {
            continue;
        }
        let spelt = spelling(command, name);
        let mut arg = Arg::new(property.name.clone())
            .help(property.help.clone())
            .value_name(property.name.to_uppercase());
        arg = match spelt {
            Some(CliArg { flag: "", .. }) => arg.required(true),
            Some(CliArg { flag, .. }) => arg.long(*flag),
            None => arg.long(property.name.replace('_', "-")),
        };
        if spelt.is_none_or(|spelt| !spelt.flag.is_empty()) && property.required {
            arg = arg.required(true);
        }
        let age = spelt.is_some_and(|spelt| spelt.value == CliValue::Age);
        let list = spelt.is_some_and(|spelt| spelt.value == CliValue::List);
        arg = match property.kind {
            _ if age => arg.value_name("AGE").value_parser(parse_age),
            _ if list => arg.value_name("WORD,WORD"),
            Kind::Flag => arg.action(ArgAction::SetTrue),
            Kind::Integer => arg.value_parser(clap::value_parser!(i64)),
            Kind::Json => arg.value_name("JSON"),
            Kind::Text if !property.words.is_empty() => arg.value_parser(
                clap::builder::PossibleValuesParser::new(property.words.clone()),
            ),
            Kind::Text => arg,
        };
        built = built.arg(arg);
    }
    if operation == Operation::Ask {
        built = asking_args(built);
    }
    target_args(built)
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
    top.extend(groups.into_iter().map(|(group, commands)| {
        Command::new(group)
            .about(group_about(group))
            .subcommand_required(true)
            .subcommands(commands)
    }));
    top
}

/// What a group of subcommands is for, in `clarion --help`.
fn group_about(group: &str) -> String {
    match group {
        "webhook" => "Manage the webhook endpoints, test them, and deliver to them.".to_owned(),
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
    for property in properties(operation) {
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
            Kind::Flag => matches.get_flag(name).then_some(Value::Bool(true)),
            Kind::Integer => matches.get_one::<i64>(name).map(|n| json!(n)),
            Kind::Text => matches.get_one::<String>(name).map(|text| json!(text)),
            Kind::Json => match matches.get_one::<String>(name) {
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
    let name = command.name;
    let args = match arguments(operation, command, matches) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("clarion {name}: {message}");
            return ExitCode::from(5);
        }
    };
    let database_url = matches
        .get_one::<String>("database_url")
        .cloned()
        .unwrap_or_default();
    let principal = matches
        .get_one::<Principal>("as")
        .cloned()
        .unwrap_or(Principal::System);
    let clarion = match Clarion::open(&database_url) {
        // AUD-4: the command line's attempts record `cli`.
        Ok(clarion) => clarion.via(Channel::Cli),
        Err(error) => {
            eprintln!("clarion {name}: {error}");
            return ExitCode::FAILURE;
        }
    };
    let text = matches.get_flag("text");
    let code = if operation == Operation::Ask && principal == Principal::System {
        ask(&clarion, &args, matches, text)
    } else {
        let reply = call(&clarion, operation, &principal, &args);
        print_reply(name, operation, &reply, text);
        exit_code(reply.status)
    };
    // REL-7: the ledger's appender writes what it holds before the exit.
    clarion.close();
    code
}

fn call(clarion: &Clarion, operation: Operation, principal: &Principal, args: &Value) -> Envelope {
    clarion.call_value(&json!({
        "op": operation.as_str(),
        "principal": principal.to_wire(),
        "args": args,
    }))
}

/// Prints a reply as JSON, or as text (a refusal on stderr).
fn print_reply(name: &str, operation: Operation, reply: &Envelope, text: bool) {
    if !text {
        println!("{}", reply.to_reply());
    } else if reply.status == 200 {
        println!("{}", readable::render(operation, &reply.body));
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
fn ask(clarion: &Clarion, args: &Value, matches: &ArgMatches, text: bool) -> ExitCode {
    let session_id = args["session_id"].as_str().unwrap_or_default();
    let mirror = MirrorArgs::from_arg_matches(matches).unwrap_or_else(|error| error.exit());
    if let Err(error) = mirror.mirror(clarion, session_id) {
        let refused = envelope::error(&error);
        print_reply("ask", Operation::Ask, &refused, text);
        return exit_code(refused.status);
    }
    let reply = call(clarion, Operation::Ask, &Principal::System, args);
    let pending_id = reply.body["pending_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if reply.status != 200 || !text {
        print_reply("ask", Operation::Ask, &reply, text);
    } else {
        print_asked(clarion, &pending_id, &reply.body);
    }
    if reply.status != 200 {
        return exit_code(reply.status);
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
            print_reply("ask", Operation::Wait, &refused, text);
            exit_code(refused.status)
        }
    }
}

/// `clarion ask --text`: the id, then each question's id with its option
/// ids and labels, one per line (the ids an answer names).
fn print_asked(clarion: &Clarion, pending_id: &str, body: &Value) {
    let created = if body["created"] == Value::Bool(true) {
        "asked"
    } else {
        "already asked with this idempotency key"
    };
    println!("{pending_id} ({created})");
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
    format!(
        "{} by {}: {words}",
        outcome.as_str(),
        response.decided_by.as_str()
    )
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
