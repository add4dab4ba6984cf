//! `clarion webhook test` and `clarion webhook run` (HOOK-3, HOOK-4), the
//! binary's own subcommands beside the declared `add`, `list`, `enable`,
//! `disable`, `remove` and `rotate`; and the worker's flags, which
//! `clarion serve` takes too.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use clarion::{Channel, Clarion, TestDelivery, WebhookOptions};

use crate::{exit_code, parse_age};

/// The worker's timings (HOOK-4): short ones let tests run in seconds.
#[derive(clap::Args, Debug, Clone)]
pub struct WebhookFlags {
    /// How long one delivery may take before it failed: an age with its
    /// unit (10s, 500ms).
    #[arg(long, value_name = "AGE", value_parser = parse_age, default_value = "10s")]
    webhook_timeout: u64,
    /// The delay before a failed event is tried again; each later delay
    /// doubles, up to an hour.
    #[arg(long, value_name = "AGE", value_parser = parse_age, default_value = "5s")]
    webhook_first_retry: u64,
    /// How long an event may keep failing before its endpoint is marked
    /// failing (and tried no more until `clarion webhook enable`).
    #[arg(long, value_name = "AGE", value_parser = parse_age, default_value = "3d")]
    webhook_give_up: u64,
}

impl WebhookFlags {
    pub fn options(&self) -> WebhookOptions {
        WebhookOptions::new()
            .timeout(Duration::from_millis(self.webhook_timeout))
            .first_retry(Duration::from_millis(self.webhook_first_retry))
            .give_up(Duration::from_millis(self.webhook_give_up))
    }
}

fn database_arg() -> Arg {
    Arg::new("database_url")
        .long("database-url")
        .env("CLARION_DATABASE_URL")
        .default_value("./clarion.db")
        .value_name("URL")
        .help("SQLite path or URL (`sqlite:///abs/path`), or a PostgreSQL URL.")
}

/// `webhook test ID` and `webhook run`, for the `webhook` group.
pub fn commands() -> Vec<(&'static str, Command)> {
    let test = Command::new("test")
        .about("Send an endpoint one signed webhook.test event now, and print what it answered.")
        .arg(
            Arg::new("id")
                .required(true)
                .value_name("ID")
                .help("The endpoint."),
        )
        .arg(
            Arg::new("timeout")
                .long("timeout")
                .value_name("AGE")
                .value_parser(parse_age)
                .default_value("10s")
                .help("How long to wait for the answer: an age with its unit (10s, 500ms)."),
        )
        .arg(database_arg());
    // LINK-4: the base of the links in the payloads of endpoints added
    // with `--links`.
    let run = Command::new("run")
        .arg(database_arg())
        .arg(crate::links::public_url_arg());
    let run = WebhookFlags::augment_args(run)
        .about("Deliver the webhooks until SIGINT or SIGTERM (clarion serve does too).");
    vec![("webhook", test), ("webhook", run)]
}

/// Runs `webhook test` or `webhook run`; `None` for another name.
pub fn run(name: &str, matches: &ArgMatches) -> Option<ExitCode> {
    let database_url = matches
        .get_one::<String>("database_url")
        .cloned()
        .unwrap_or_default();
    let mut builder = crate::database::builder(&database_url);
    if let Some(url) = crate::links::public_url(matches) {
        builder = builder.public_url(url);
    }
    let clarion = match builder.open() {
        Ok(clarion) => clarion.via(Channel::Cli),
        Err(error) => {
            eprintln!("clarion webhook {name}: {error}");
            return Some(ExitCode::FAILURE);
        }
    };
    let code = match name {
        "test" => test(&clarion, matches),
        "run" => deliver(&clarion, matches),
        _ => return None,
    };
    clarion.close();
    Some(code)
}

/// HOOK-3: one signed `webhook.test`; exit 0 for a 2xx.
fn test(clarion: &Clarion, matches: &ArgMatches) -> ExitCode {
    let id = matches.get_one::<String>("id").cloned().unwrap_or_default();
    let timeout = Duration::from_millis(*matches.get_one::<u64>("timeout").unwrap_or(&10_000));
    match clarion.webhook_test(&id, timeout) {
        Ok(TestDelivery::Answered(status)) => {
            println!("answered {status}");
            if (200..300).contains(&status) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ok(TestDelivery::Failed(why)) => {
            println!("no answer: {why}");
            ExitCode::FAILURE
        }
        Err(error) => {
            let refused = clarion::envelope::error(&error);
            eprintln!("clarion webhook test: {error}");
            exit_code(refused.status)
        }
    }
}

/// HOOK-4: the worker on this handle until SIGINT or SIGTERM.
fn deliver(clarion: &Clarion, matches: &ArgMatches) -> ExitCode {
    let flags = match WebhookFlags::from_arg_matches(matches) {
        Ok(flags) => flags,
        Err(error) => error.exit(),
    };
    if let Err(error) = clarion.start_webhooks(flags.options()) {
        eprintln!("clarion webhook run: {error}");
        return ExitCode::FAILURE;
    }
    eprintln!("clarion webhook run: delivering until SIGINT or SIGTERM");
    match until_signal() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("clarion webhook run: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Blocks until SIGINT or SIGTERM.
fn until_signal() -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("could not start the runtime: {error}"))?;
    runtime.block_on(async {
        let installed =
            |error: std::io::Error| format!("could not install a signal handler: {error}");
        let mut interrupt = signal(SignalKind::interrupt()).map_err(installed)?;
        let mut terminate = signal(SignalKind::terminate()).map_err(installed)?;
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        Ok(())
    })
}
