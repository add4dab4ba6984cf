//! `clarion serve` (HTTP-8) and `clarion token` (HTTP-4): the HTTP door
//! standalone, with the built-in token authenticator, and the tokens it
//! accepts. The router, the server loop and the tokens are the library's
//! (`clarion::http`); this file parses flags, binds, and waits for a
//! signal.

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use clap::{Args, Subcommand};
use clarion::http::{self, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator};
use clarion::{Clarion, Principal, TokenInfo};

/// `clarion serve`'s flags.
#[derive(Args)]
pub struct ServeArgs {
    /// SQLite path or URL (`sqlite:///abs/path`), or a PostgreSQL URL.
    #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
    database_url: String,
    // The webhook worker's timings (HOOK-4).
    #[command(flatten)]
    webhooks: crate::webhook::WebhookFlags,
    // MAIL-1: the mail worker's server and sender.
    #[command(flatten)]
    mail: crate::mail::MailFlags,
    /// Address to listen on; port 0 picks a free one (printed).
    #[arg(long, env = "CLARION_LISTEN", default_value = "127.0.0.1:7878")]
    listen: String,
    /// An origin (`https://host[:port]`) allowed to use the API from a
    /// browser with cookies (CORS with credentials). Repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Serve requests without a credential as this principal (e.g.
    /// `user:alice`); only on a loopback address.
    #[arg(long = "open-as", value_name = "PRINCIPAL")]
    open_as: Option<Principal>,
    /// Seconds requests in flight get to finish after SIGINT/SIGTERM.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    grace_period: u64,
    /// Seconds a client gets to send a request's headers.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    header_timeout: u64,
    /// Seconds a client gets to send a whole request, headers and body,
    /// from its first byte; then 408 and the connection closes. A
    /// connection that sends nothing for that long is closed.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    request_timeout: u64,
    /// Connections open at once; at the cap nothing more is accepted until
    /// one closes. Default: the descriptor limit less 256.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: Option<u64>,
    /// Event streams one credential (a token, a web session) may hold
    /// open at once; the next gets 429 with Retry-After.
    #[arg(
        long,
        default_value_t = http::STREAMS_PER_CREDENTIAL as u64,
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    max_streams_per_credential: u64,
    /// Mark the session cookie `Secure`: set it when clients reach the
    /// server over TLS (through a reverse proxy).
    #[arg(long)]
    secure_cookies: bool,
    /// Do not settle due bundles on a thread of this server: another
    /// process sweeps, or `clarion expire-due` runs from a timer.
    #[arg(long = "no-sweep")]
    no_sweep: bool,
    /// The web inbox at `/` uses the API at this origin instead of this
    /// server's (which must `--allow-origin` this one).
    #[arg(long = "inbox-api", value_name = "ORIGIN")]
    inbox_api: Option<String>,
    /// Ask a few sample bundles in workspace `w-demo`, owned by the
    /// `--open-as` user, so the web inbox has something to show.
    #[arg(long, requires = "open_as")]
    demo: bool,
    /// Where this server is reached from outside (https://inbox.example.com): answer links
    /// are <URL>/a/<token>. Under --open-as, a loopback address only. Mail needs it.
    #[arg(long = "public-url", env = "CLARION_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,
}

/// `clarion token …`.
#[derive(Subcommand)]
pub enum TokenCommand {
    /// Make a token; prints it once, as the last line.
    Add {
        #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
        database_url: String,
        /// Whom the token authenticates as: system, user:<id>, agent:<user>/<agent>:<grants>.
        #[arg(long = "as")]
        principal: Principal,
        /// A note for people.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// List the tokens (never their text).
    List {
        #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
        database_url: String,
    },
    /// Revoke a token by its id (at least 6 hex digits) or its text.
    Revoke {
        /// The id shown by `clarion token list`, or a prefix of it.
        id: String,
        #[arg(long, env = "CLARION_DATABASE_URL", default_value = "./clarion.db")]
        database_url: String,
    },
}

/// The command-line form of a principal, as `--as` reads it.
fn principal_text(principal: &Principal) -> String {
    match principal {
        Principal::System => "system".into(),
        Principal::Unclassified => "unclassified".into(),
        Principal::User { user_id } => format!("user:{user_id}"),
        Principal::Agent {
            user_id,
            agent_id,
            grants,
        } => {
            let grants: Vec<&str> = grants.iter().map(|grant| grant.as_str()).collect();
            format!("agent:{user_id}/{agent_id}:{}", grants.join(","))
        }
    }
}

fn describe(token: &TokenInfo) -> String {
    let state = match token.revoked_at {
        Some(at) => format!("revoked {}", at.to_rfc3339()),
        None => "live".to_owned(),
    };
    format!(
        "{}  {}  {}  created {}  {:?}",
        token.id,
        principal_text(&token.principal),
        state,
        token.created_at.to_rfc3339(),
        token.label
    )
}

fn open(database_url: &str) -> Result<Clarion, String> {
    crate::database::builder(database_url)
        .open()
        .map_err(|error| error.to_string())
}

/// How often `clarion serve`'s sweeper looks at the least (EXP-4: 250 ms
/// suits most hosts); it also wakes at the next deadline.
const SWEEP_INTERVAL: std::time::Duration = std::time::Duration::from_millis(250);

fn open_sweeping(
    database_url: &str,
    sweep: Option<std::time::Duration>,
    public_url: Option<&str>,
    mail: Option<clarion::MailOptions>,
) -> Result<Clarion, String> {
    let mut builder = crate::database::builder(database_url);
    if let Some(url) = public_url {
        builder = builder.public_url(url);
    }
    if let Some(interval) = sweep {
        builder = builder.sweep_deadlines(interval);
    }
    if let Some(mail) = mail {
        builder = builder.mail(mail);
    }
    builder.open().map_err(|error| error.to_string())
}

/// Runs a `clarion token` command; the error is the message and the
/// exit code.
pub fn token(command: TokenCommand) -> Result<(), (String, u8)> {
    let failed = |error: clarion::Error| {
        let code = match error.http_status() {
            404 => 3,
            400 => 5,
            _ => 1,
        };
        (error.to_string(), code)
    };
    match command {
        TokenCommand::Add {
            database_url,
            principal,
            label,
        } => {
            let inbox = open(&database_url).map_err(|message| (message, 1))?;
            let made = inbox.add_token(&principal, &label).map_err(failed)?;
            println!(
                "token {} for {}; store it now, it is not shown again:",
                made.info.id,
                principal_text(&made.info.principal)
            );
            println!("{}", made.token);
        }
        TokenCommand::List { database_url } => {
            let inbox = open(&database_url).map_err(|message| (message, 1))?;
            for token in inbox.list_tokens().map_err(failed)? {
                println!("{}", describe(&token));
            }
        }
        TokenCommand::Revoke { id, database_url } => {
            let inbox = open(&database_url).map_err(|message| (message, 1))?;
            let revoked = inbox.revoke_token(&id).map_err(failed)?;
            println!("revoked {}", describe(&revoked));
        }
    }
    Ok(())
}

fn address(listen: &str) -> Result<SocketAddr, String> {
    listen
        .to_socket_addrs()
        .map_err(|error| format!("--listen {listen:?}: {error}"))?
        .next()
        .ok_or_else(|| format!("--listen {listen:?} names no address"))
}

/// Logs to stderr, filtered by `RUST_LOG` as `tracing-subscriber`'s
/// `Targets` read it (`info`, `warn,tower_http=debug`, …); warnings and
/// errors by default. Each request's span carries its request id (HTTP-7).
fn log_to_stderr() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|text| text.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::WARN));
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .with(filter)
        .try_init();
}

/// Why `clarion serve` did not serve: flags it cannot run with (a usage
/// error, exit 2), or a failure (exit 1).
pub enum Refused {
    Usage(String),
    Failed(String),
}

impl From<String> for Refused {
    fn from(message: String) -> Self {
        Refused::Failed(message)
    }
}

impl Refused {
    pub fn message(&self) -> &str {
        match self {
            Refused::Usage(message) | Refused::Failed(message) => message,
        }
    }

    pub fn code(&self) -> u8 {
        match self {
            Refused::Usage(_) => 2,
            Refused::Failed(_) => 1,
        }
    }
}

/// Runs `clarion serve` until SIGINT or SIGTERM. The flags are checked
/// first, before the database is opened: what they cannot do together is
/// a usage error (exit 2).
pub fn serve(args: ServeArgs) -> Result<(), Refused> {
    log_to_stderr();
    let address = address(&args.listen).map_err(Refused::Usage)?;
    // HTTP-4: a server without authentication serves only this machine.
    if args.open_as.is_some() && !address.ip().is_loopback() {
        return Err(Refused::Usage(format!(
            "--open-as serves without authentication, so only on a loopback address \
             (127.0.0.1, ::1), not --listen {address}; or leave out --open-as and make \
             tokens with `clarion token add`"
        )));
    }
    // LINK-3: a link must not lead outsiders to a server without
    // authentication.
    if let Some(url) = &args.public_url {
        crate::links::check_public_url(url, args.open_as.is_some()).map_err(Refused::Usage)?;
    }
    if args.demo && !matches!(args.open_as, Some(Principal::User { .. })) {
        return Err(Refused::Usage(
            "--demo asks sample bundles for a user: give --open-as user:<id>".into(),
        ));
    }
    if let Some(api) = &args.inbox_api {
        HttpOptions::new()
            .inbox_api(api)
            .map_err(|error| Refused::Usage(format!("--inbox-api: {error}")))?;
    }
    // MAIL-1: a mail's answer link must reach this server from outside.
    if args.mail.options().is_some() && args.public_url.is_none() {
        return Err(Refused::Usage(
            "--smtp sends answer links, which need --public-url URL (where people reach \
             this server)"
                .into(),
        ));
    }
    let max_connections = connection_cap(args.max_connections).map_err(Refused::Usage)?;
    // EXP-4: outcomes of deadlines reach waiters, the outbox and the
    // event log within about a second, whoever else is connected.
    let sweep = (!args.no_sweep).then_some(SWEEP_INTERVAL);
    let inbox = ClosedOnReturn(open_sweeping(
        &args.database_url,
        sweep,
        args.public_url.as_deref(),
        args.mail.options(),
    )?);
    // HTTP-4: a server nobody can sign in to is a mistake, unless it is
    // told whom to serve, and then only to this machine: as given, the
    // command cannot run (a usage error).
    if args.open_as.is_none() && !inbox.has_live_tokens().map_err(|e| e.to_string())? {
        return Err(Refused::Usage(
            "no tokens: make one with `clarion token add --as user:<id>`, \
                    or serve without authentication with --open-as <principal> (loopback only)"
                .into(),
        ));
    }
    if args.demo {
        seed_demo(&inbox, args.open_as.as_ref())?;
    }
    // HOOK-4: the webhooks are delivered while the server runs.
    inbox
        .start_webhooks(args.webhooks.options())
        .map_err(|error| error.to_string())?;
    let shutdown = Shutdown::new();
    let mut options = HttpOptions::new()
        .shutdown(shutdown.clone())
        .secure_cookies(args.secure_cookies)
        // HTTP-11: a server that serves without a credential answers only
        // to loopback names, so a page on a rebound name cannot use it.
        .loopback_hosts_only(args.open_as.is_some())
        .streams_per_credential(args.max_streams_per_credential as usize);
    for origin in &args.allow_origin {
        options = options.allow_origin(origin);
    }
    if let Some(api) = &args.inbox_api {
        options = options
            .inbox_api(api)
            .map_err(|error| format!("--inbox-api: {error}"))?;
    }
    let blocking_threads = options.blocking_threads();
    let mut auth = TokenAuthenticator::new(&inbox);
    if let Some(principal) = args.open_as.clone() {
        auth = auth.open_as(principal);
    }
    let app = http::router(inbox.clone(), auth, options);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(blocking_threads + 8)
        .enable_all()
        .build()
        .map_err(|error| format!("could not start the runtime: {error}"))?;
    let served: Result<(), String> = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|error| format!("could not listen on {address}: {error}"))?;
        let bound = listener
            .local_addr()
            .map_err(|error| format!("no local address: {error}"))?;
        tokio::spawn(stop_on_signal(shutdown.clone())?);
        println!("listening on http://{bound}");
        let _ = std::io::stdout().flush();
        http::serve(
            listener,
            app,
            shutdown,
            ServeOptions::new()
                .grace_period(Duration::from_secs(args.grace_period))
                .header_read_timeout(Duration::from_secs(args.header_timeout.max(1)))
                .request_timeout(Duration::from_secs(args.request_timeout.max(1)))
                .max_connections(max_connections),
        )
        .await
        .map_err(|error| format!("serving failed: {error}"))
    });
    // REL-7: waits still blocked (their clients already have their 503)
    // end now, so no thread outlives the grace period.
    inbox.close();
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(served?)
}

/// REL-7: however `serve` returns once the database is open (a refusal
/// too), the handle closes first, so its threads (the sweeper's round, a
/// connection being opened) end before the process exits: one still in
/// libpq's TLS handshake at exit crashes it in OpenSSL's teardown.
struct ClosedOnReturn(Clarion);

impl std::ops::Deref for ClosedOnReturn {
    type Target = Clarion;

    fn deref(&self) -> &Clarion {
        &self.0
    }
}

impl Drop for ClosedOnReturn {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// HTTP-12: raises the soft descriptor limit to the hard one (a server
/// wants every descriptor it may have), then the connection cap: the
/// limit less what the database, the watcher and files need, or the one
/// given, which may not be larger.
fn connection_cap(asked: Option<u64>) -> Result<usize, String> {
    let (soft, hard) = http::descriptor_limits();
    let limit = if soft < hard && raise_descriptor_limit() {
        hard
    } else {
        soft
    };
    let allowed = http::connections_allowed(limit);
    eprintln!("clarion serve: up to {allowed} connections (descriptor limit {limit})");
    match asked {
        None => Ok(allowed),
        Some(asked) if asked <= allowed as u64 => Ok(asked as usize),
        Some(asked) => Err(format!(
            "--max-connections {asked} is more than the descriptor limit {limit} allows \
             ({allowed}: {} are kept for the database, the watcher and files)",
            http::RESERVED_DESCRIPTORS
        )),
    }
}

/// Sets the soft descriptor limit to the hard one; false if refused.
fn raise_descriptor_limit() -> bool {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes and setrlimit reads the struct they are
    // given, nothing else.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return false;
        }
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0
    }
}

/// `--demo`: sample bundles for the `--open-as` user to answer.
fn seed_demo(inbox: &Clarion, open_as: Option<&Principal>) -> Result<(), String> {
    let Some(Principal::User { user_id }) = open_as else {
        return Err("--demo asks sample bundles for a user: give --open-as user:<id>".into());
    };
    let created = crate::demo::seed(inbox, user_id).map_err(|error| error.to_string())?;
    eprintln!(
        "clarion serve: --demo asked {} in workspace w-demo for user:{user_id}",
        crate::readable::count(created as u64, "sample bundle", "sample bundles")
    );
    Ok(())
}

/// HTTP-8: SIGINT or SIGTERM begins the shutdown. The handlers are
/// installed before the address is printed, so a signal sent as soon as
/// the server says it listens is never missed.
fn stop_on_signal(shutdown: Shutdown) -> Result<impl std::future::Future<Output = ()>, String> {
    use tokio::signal::unix::{signal, SignalKind};
    let installed = |error: std::io::Error| format!("could not install a signal handler: {error}");
    let mut interrupt = signal(SignalKind::interrupt()).map_err(installed)?;
    let mut terminate = signal(SignalKind::terminate()).map_err(installed)?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        eprintln!("clarion serve: stopping");
        shutdown.begin();
    })
}
