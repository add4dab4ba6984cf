//! [`Builder`]: the settings a handle is opened with, handed to the
//! engine, which opens the pool and starts every thread (`domain/open.rs`).

use std::sync::Arc;
use std::time::Duration;

use crate::domain::engine::Engine;
use crate::domain::open::EngineOptions;
use crate::domain::resume::ResumeDispatcher;
use crate::error::OpenError;
use crate::handle::clarion::Clarion;
use crate::rules::vocabulary::Channel;
use crate::store::{Clock, IdSource, Synchronous};

/// Options for [`Clarion::builder`].
///
/// ```
/// use std::time::Duration;
/// # let dir = tempfile::tempdir().unwrap();
/// # let url = format!("sqlite://{}", dir.path().join("inbox.db").display());
/// let inbox = clarion::Clarion::builder(&url)
///     .pool_size(4)
///     .poll_interval(Duration::from_millis(100))
///     .open()?;
/// # Ok::<(), clarion::OpenError>(())
/// ```
pub struct Builder {
    options: EngineOptions,
    /// MAIL-1: the mail worker to start once open.
    #[cfg(feature = "mail")]
    mail: Option<crate::domain::mail::worker::MailOptions>,
}

impl Builder {
    /// EXP-4: settles due bundles on a thread of this handle, waking at
    /// the earlier of `interval` and the next deadline in the database
    /// (off by default; 250 ms suits most hosts). Correctness never
    /// depends on it — whoever meets a due bundle settles it — but with it
    /// a deadline's outcome reaches waiters, the outbox and the event log
    /// within about a second. It ends when the handle is closed or the
    /// last clone dropped. A host that mounts the HTTP router should turn
    /// it on: `clarion serve` does.
    pub fn sweep_deadlines(mut self, interval: Duration) -> Self {
        self.options.sweep_interval = Some(interval.max(Duration::from_millis(10)));
        self
    }

    /// How long a bundle stays attached to its agent without a wait renewing
    /// it (DEL-3; default 30 s). Asking attaches a bundle to this handle;
    /// while an agent of the handle waits, the lease is renewed once per
    /// third of it. When the process dies or nobody waits for a lease, the
    /// bundle counts as detached, so its answer reaches the outbox without
    /// any host call.
    pub fn attachment_lease(mut self, lease: Duration) -> Self {
        self.options.attachment_lease = lease.max(Duration::from_millis(3));
        self
    }

    /// When a SQLite commit reaches the disk (REL-5). The default,
    /// [`Synchronous::Full`], makes every `200` survive power loss;
    /// [`Synchronous::Normal`] commits faster but may lose the last commits
    /// on power loss (never on a process crash), so an answer reported as
    /// won could be pending again after a reboot. PostgreSQL ignores it:
    /// its durability is the server's `synchronous_commit`.
    pub fn synchronous(mut self, synchronous: Synchronous) -> Self {
        self.options.synchronous = synchronous;
        self
    }

    /// The bound within which a waiter sees a change made by another
    /// handle or process even if no notification reached it (WAIT-3;
    /// default 250 ms). Changes made through this handle wake waiters at
    /// once; on PostgreSQL other processes' changes arrive by `NOTIFY`
    /// (WAIT-3a), and this interval is the fallback poll: one statement per
    /// interval for all of the handle's waiters together.
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.options.poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// SQLite: how often the handle checks `PRAGMA data_version` for other
    /// processes' commits while any of its agents waits (WAIT-3a; default
    /// 10 ms). One pragma on one connection, whatever the number of
    /// waiters; the waited-on bundles are re-read only when it moved.
    /// PostgreSQL ignores it: notifications push.
    pub fn watch_interval(mut self, interval: Duration) -> Self {
        self.options.watch_interval = interval.max(Duration::from_millis(1));
        self
    }

    /// Resumes detached agents with their answers (DEL-3).
    pub fn dispatcher(mut self, dispatcher: Arc<dyn ResumeDispatcher>) -> Self {
        self.options.dispatcher = Some(dispatcher);
        self
    }

    /// How long `deliver_pending` waits for one dispatch before it counts
    /// as failed (default 5 s); its lease lasts twice as long (DEL-4). A
    /// winning resolve never waits: its entry is queued for the handle's
    /// one dispatch thread.
    pub fn dispatch_timeout(mut self, timeout: Duration) -> Self {
        self.options.dispatch_timeout = timeout;
        self
    }

    /// PROD-1: a URL that reaches the PostgreSQL server directly, beside a
    /// database URL that goes through a transaction-mode pooler
    /// (`?pooler=transaction`): migrations run on it, and one connection
    /// per handle `LISTEN`s on it so that other processes' changes wake
    /// waiters at once. Without it, such a handle polls (every
    /// [`poll_interval`](Self::poll_interval)).
    pub fn direct_url(mut self, url: &str) -> Self {
        self.options.direct_url = Some(url.to_owned());
        self
    }

    /// Maximum number of pooled connections (default 8).
    pub fn pool_size(mut self, size: u32) -> Self {
        self.options.pool_size = size;
        self
    }

    /// How long a SQLite connection waits for the write lock (default 5 s).
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.options.busy_timeout = timeout;
        self
    }

    /// How long an operation waits for a free pooled connection (default 30 s).
    pub fn connection_timeout(mut self, timeout: Duration) -> Self {
        self.options.connection_timeout = timeout;
        self
    }

    /// The clock used for every timestamp clarion writes (DM-2).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.options.clock = clock;
        self
    }

    /// The source of new `pending_id`s and turn ids.
    pub fn ids(mut self, ids: Arc<dyn IdSource>) -> Self {
        self.options.ids = ids;
        self
    }

    /// LINK-1: where this service is reached from outside, such as
    /// `https://inbox.example.com`: answer links are `<url>/a/<token>`.
    /// Without it a link's `url` is the relative `/a/<token>`. An URL that
    /// is not absolute `http`/`https` fails the open.
    pub fn public_url(mut self, url: &str) -> Self {
        self.options.public_url = Some(url.to_owned());
        self
    }

    /// MAIL-1 (feature `mail`): emails the people each bundle reaches
    /// (PPL-8) who have an email — at the ask, at each reminder, and when
    /// it is escalated to them — with their own answer link, from a
    /// thread of this handle (see `docs/mail.md`). Needs
    /// [`public_url`](Self::public_url): without one, or with an SMTP URL
    /// or sender that is not usable, the open fails.
    #[cfg(feature = "mail")]
    pub fn mail(mut self, options: crate::domain::mail::worker::MailOptions) -> Self {
        self.mail = Some(options);
        self
    }

    /// Test hook: counts the statements this handle's pool connections
    /// start, into `counter` (LIST-11).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn count_statements(mut self, counter: crate::store::StatementCounter) -> Self {
        self.options.statements = Some(counter);
        self
    }

    /// Connects, migrates, starts the threads asked for and returns the
    /// handle.
    pub fn open(self) -> Result<Clarion, OpenError> {
        #[cfg(feature = "mail")]
        if self.mail.is_some() && self.options.public_url.is_none() {
            return Err(OpenError::Config(
                "mail needs a public URL (Builder::public_url) for its answer links".into(),
            ));
        }
        let engine = Engine::open(self.options)?;
        #[cfg(feature = "mail")]
        if let Some(mail) = &self.mail {
            if let Err(why) = engine.start_mail(mail) {
                engine.close();
                return Err(OpenError::Config(why));
            }
        }
        Ok(Clarion {
            engine,
            channel: Channel::Rust,
        })
    }
}

impl Clarion {
    /// Opens (and migrates) the database at `database_url` with default
    /// settings: `sqlite:///abs/path.db`, a plain file path, or
    /// `postgres://user@host/db` (with `?pooler=transaction` behind a
    /// transaction-mode pooler such as PgBouncer: PROD-1).
    pub fn open(database_url: &str) -> Result<Clarion, OpenError> {
        Clarion::builder(database_url).open()
    }

    /// A [`Builder`] with the defaults, to change settings before opening.
    pub fn builder(database_url: &str) -> Builder {
        Builder {
            options: EngineOptions::new(database_url),
            #[cfg(feature = "mail")]
            mail: None,
        }
    }
}
