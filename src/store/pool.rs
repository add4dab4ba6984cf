//! The connection pool: opening connections (with each backend's session
//! settings), checking them cheaply, and discarding the ones that broke.

use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel::connection::{SimpleConnection, TransactionManager};
use diesel::r2d2::{self, ManageConnection, Pool, PooledConnection};
use diesel::{Connection, SqliteConnection};

use super::connection::AnyConnection;
use super::error::{ConnectError, DbError, Failure, OpenError};
use super::health::Health;
use super::migrate::migrate;
use super::url::{Backend, Target};

/// Opens connections for the pool, keeping the real error of a failed attempt
/// (unlike `MultiConnection::establish`, which would hide it).
#[derive(Debug)]
pub(crate) struct Manager {
    target: Target,
    health: Arc<Health>,
    busy_timeout: Duration,
    synchronous: Synchronous,
    connecting: Arc<Connecting>,
    #[cfg(feature = "test-hooks")]
    statements: Option<StatementCounter>,
}

/// How many connections are being opened right now. r2d2 opens them on
/// threads of its own, which nothing joins: a process that exits while
/// one is still in libpq's TLS handshake crashes in OpenSSL's teardown, so
/// closing a handle waits for them (REL-7: nothing a handle started
/// outlives it).
#[derive(Debug, Default)]
struct Connecting {
    count: std::sync::Mutex<usize>,
    settled: std::sync::Condvar,
}

impl Connecting {
    fn count(&self) -> std::sync::MutexGuard<'_, usize> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts one opening until the returned guard drops.
    fn start(self: &Arc<Self>) -> ConnectingGuard {
        *self.count() += 1;
        ConnectingGuard(self.clone())
    }

    /// Waits until none is being opened, at most `timeout`.
    fn settle(&self, timeout: Duration) {
        let count = self.count();
        let _ = self
            .settled
            .wait_timeout_while(count, timeout, |count| *count > 0);
    }
}

struct ConnectingGuard(Arc<Connecting>);

impl Drop for ConnectingGuard {
    fn drop(&mut self) {
        let mut count = self.0.count();
        *count -= 1;
        if *count == 0 {
            self.0.settled.notify_all();
        }
    }
}

/// Test hook: counts the statements the pool's connections start (LIST-11:
/// a page's statements do not grow with the page). The pool's own
/// liveness check (`SELECT 1`) is not counted: it depends on timing.
#[cfg(feature = "test-hooks")]
#[derive(Debug, Clone, Default)]
pub struct StatementCounter(std::sync::Arc<std::sync::atomic::AtomicU64>);

#[cfg(feature = "test-hooks")]
impl StatementCounter {
    /// Statements started so far.
    pub fn count(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[cfg(feature = "test-hooks")]
impl diesel::connection::Instrumentation for StatementCounter {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        if let diesel::connection::InstrumentationEvent::StartQuery { query, .. } = event {
            if query.to_string() != "SELECT 1" {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
}

/// When a SQLite commit is on disk (REL-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Synchronous {
    /// `synchronous = FULL`, the default: a commit is on disk before the
    /// call that made it returns, so a `200` survives power loss.
    #[default]
    Full,
    /// `synchronous = NORMAL`: faster commits that may lose the last ones
    /// on power loss (never on a process crash).
    Normal,
}

impl Synchronous {
    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "PRAGMA synchronous = FULL",
            Synchronous::Normal => "PRAGMA synchronous = NORMAL",
        }
    }
}

impl Manager {
    fn connect_target(&self) -> Result<AnyConnection, OpenError> {
        match &self.target {
            Target::Sqlite { path } => {
                let mut conn =
                    SqliteConnection::establish(path).map_err(|source| OpenError::Connect {
                        backend: "SQLite",
                        message: source.to_string(),
                    })?;
                configure_sqlite(&mut conn, self.busy_timeout, self.synchronous).map_err(
                    |source| OpenError::Configure {
                        backend: "SQLite",
                        message: source.to_string(),
                    },
                )?;
                Ok(AnyConnection::Sqlite(conn))
            }
            #[cfg(feature = "postgres")]
            Target::Postgres(target) => {
                connect_postgres(&target.url, target.pooled).map(AnyConnection::Postgres)
            }
            #[cfg(not(feature = "postgres"))]
            Target::Postgres(target) => Err(OpenError::PostgresNotCompiled {
                url: target.url.clone(),
            }),
        }
    }

    /// The connection migrations run on: PostgreSQL's direct URL when
    /// there is one (PROD-1), else a connection like the pool's.
    fn connect_to_migrate(&self) -> Result<AnyConnection, OpenError> {
        match &self.target {
            #[cfg(feature = "postgres")]
            Target::Postgres(target) => {
                let (url, pooled) = target.migrate_url();
                connect_postgres(url, pooled).map(AnyConnection::Postgres)
            }
            _ => self.connect_target(),
        }
    }
}

/// A PostgreSQL connection with clarion's session settings; behind a
/// transaction pooler (PROD-1), one that keeps nothing between
/// transactions instead: every statement unnamed (parsed, bound and run in
/// one round trip) and no session settings, which would land on whichever
/// server connection the pooler lent and stay there for its other clients.
#[cfg(feature = "postgres")]
pub(crate) fn connect_postgres(url: &str, pooled: bool) -> Result<diesel::PgConnection, OpenError> {
    let mut conn = diesel::PgConnection::establish(url).map_err(|source| OpenError::Connect {
        backend: "PostgreSQL",
        message: source.to_string(),
    })?;
    if pooled {
        conn.set_prepared_statement_cache_size(diesel::connection::CacheSize::Disabled);
        return Ok(conn);
    }
    configure_postgres(&mut conn).map_err(|source| OpenError::Configure {
        backend: "PostgreSQL",
        message: source.to_string(),
    })?;
    Ok(conn)
}

/// `busy_timeout` goes first and alone: switching to WAL may itself need the
/// lock, and must wait for it rather than fail.
fn configure_sqlite(
    conn: &mut SqliteConnection,
    busy_timeout: Duration,
    synchronous: Synchronous,
) -> diesel::QueryResult<()> {
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {}",
        busy_timeout.as_millis()
    ))?;
    switch_to_wal(conn, busy_timeout)?;
    conn.batch_execute(synchronous.pragma())?;
    conn.batch_execute("PRAGMA foreign_keys = ON")?;
    // Reads through a memory map share the OS page cache between pooled
    // connections instead of copying pages into each connection's small
    // private cache; listings of large inboxes read many index pages.
    conn.batch_execute("PRAGMA mmap_size = 268435456")?;
    Ok(())
}

/// Every statement clarion runs is prepared once per connection and keeps
/// one plan whatever its values: each looks rows up by key or walks an
/// index in order, and the parameters decide nothing a plan could exploit.
/// Left to choose, PostgreSQL weighs a generic plan against the custom
/// plans of the first five runs; once the tables have grown it goes on
/// planning the claim's and the listing's nested subqueries afresh on every
/// run, which costs several times their execution (measured: binding the
/// claim's read went from 80 to 540 µs).
///
/// JIT compilation is off: a generic plan prices a walk cut short by its
/// `LIMIT` as if it read every row the walk could reach, so over a large
/// table its cost passes the JIT thresholds and PostgreSQL compiles the
/// query before running it — measured on a history page at a million
/// bundles: 460 ms of compiling for a 0.5 ms walk. No statement clarion
/// runs is long enough to repay a compilation.
#[cfg(feature = "postgres")]
fn configure_postgres(conn: &mut diesel::PgConnection) -> diesel::QueryResult<()> {
    conn.batch_execute("SET plan_cache_mode = force_generic_plan; SET jit = off")
}

/// Switching a fresh file to WAL can fail at once with "database is
/// locked", without waiting in the busy handler, while another connection
/// holds a lock it must not wait for (SQLite refuses rather than risk a
/// deadlock) — as when several handles open a new file together. The switch
/// is retried until the busy timeout has passed.
fn switch_to_wal(conn: &mut SqliteConnection, busy_timeout: Duration) -> diesel::QueryResult<()> {
    let deadline = Instant::now() + busy_timeout;
    loop {
        match conn.batch_execute("PRAGMA journal_mode = WAL") {
            Err(diesel::result::Error::DatabaseError(_, info))
                if info.message().contains("locked") && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            outcome => return outcome,
        }
    }
}

/// A connection is handed out again without a round trip to check it if it
/// came back to the pool this recently (as HikariCP's "alive bypass
/// window" does): a busy pool then pays nothing per operation, while a
/// connection that sat idle — across a server restart, say — is checked.
const RECENTLY_USED: Duration = Duration::from_millis(500);

/// A pooled connection, when it last came back to the pool, and whether an
/// operation on it found it closed.
pub(crate) struct PooledConn {
    conn: AnyConnection,
    returned_at: Option<Instant>,
    lost: bool,
}

impl PooledConn {
    /// Runs `body` on the connection; if it fails because the connection is
    /// gone (the server closed it), the pool discards the connection instead
    /// of handing it out again. (A failure inside a transaction is caught
    /// anyway: its ROLLBACK fails too, which breaks the transaction manager.)
    pub(crate) fn run<T, E: Failure>(
        &mut self,
        body: impl FnOnce(&mut AnyConnection) -> Result<T, E>,
    ) -> Result<T, E> {
        let outcome = body(&mut self.conn);
        if outcome.as_ref().is_err_and(Failure::lost_connection) {
            self.lost = true;
        }
        outcome
    }
}

impl std::ops::Deref for PooledConn {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl std::ops::DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

impl ManageConnection for Manager {
    type Connection = PooledConn;
    type Error = ConnectError;

    fn connect(&self) -> Result<PooledConn, ConnectError> {
        let _opening = self.connecting.start();
        #[allow(unused_mut)] // mutated by the test hook only
        let mut conn = self
            .connect_target()
            .inspect_err(|error| self.health.unreachable(error))?;
        self.health.reached();
        #[cfg(feature = "test-hooks")]
        if let Some(counter) = &self.statements {
            conn.set_instrumentation(counter.clone());
        }
        Ok(PooledConn {
            conn,
            returned_at: None,
            lost: false,
        })
    }

    fn is_valid(&self, conn: &mut PooledConn) -> Result<(), ConnectError> {
        // A local SQLite file cannot drop a connection; a PostgreSQL
        // connection can, unless it just proved itself.
        let recently_used = conn
            .returned_at
            .is_some_and(|at| at.elapsed() < RECENTLY_USED);
        if self.target.backend() == Backend::Sqlite || recently_used {
            return Ok(());
        }
        conn.batch_execute("SELECT 1").map_err(|source| {
            ConnectError(OpenError::Configure {
                backend: self.target.backend().name(),
                message: source.to_string(),
            })
        })
    }

    fn has_broken(&self, conn: &mut PooledConn) -> bool {
        // A connection dropped while unwinding, or still inside a
        // transaction, must not be handed out again.
        let broken = std::thread::panicking()
            || conn.lost
            || <AnyConnection as Connection>::TransactionManager::is_broken_transaction_manager(
                &mut conn.conn,
            );
        // r2d2 asks this as the connection comes back to the pool.
        conn.returned_at = Some(Instant::now());
        broken
    }
}

pub(crate) type DbConn = PooledConnection<Manager>;

/// How long a caller waits on the pool between looks at the database's
/// health: a caller already waiting when the database goes away is
/// refused within this, not at the end of the connection timeout.
const HEALTH_SLICE: Duration = Duration::from_millis(250);

/// The pool, and what it last learnt of the database (PROD-2).
#[derive(Clone)]
pub(crate) struct DbPool {
    pool: Pool<Manager>,
    health: Arc<Health>,
    connecting: Arc<Connecting>,
    timeout: Duration,
}

impl DbPool {
    /// A connection, waiting up to the connection timeout while the
    /// database answers. While it does not, refused at once (but for one
    /// probe every [`super::health::PROBE_EVERY`]) as unavailable.
    pub(crate) fn get(&self) -> Result<DbConn, DbError> {
        if !self.health.is_up() {
            if !self.health.take_probe() {
                return Err(DbError::unavailable());
            }
            return self
                .pool
                .get_timeout(Duration::from_secs(1).min(self.timeout))
                .map_err(|_| DbError::unavailable());
        }
        let started = Instant::now();
        loop {
            let slice = self
                .timeout
                .saturating_sub(started.elapsed())
                .min(HEALTH_SLICE);
            match self.pool.get_timeout(slice) {
                Ok(conn) => return Ok(conn),
                Err(_) if !self.health.is_up() => return Err(DbError::unavailable()),
                Err(error) if started.elapsed() >= self.timeout => return Err(error.into()),
                Err(_) => {}
            }
        }
    }

    /// Waits, at most `timeout`, until no connection is being opened on
    /// the pool's own threads (see [`Connecting`]).
    pub(crate) fn settle_connects(&self, timeout: Duration) {
        self.connecting.settle(timeout);
    }

    /// Whether the database answered the last time the pool tried it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // `/readyz` asks
    pub(crate) fn is_up(&self) -> bool {
        self.health.is_up()
    }
}

/// Settings that shape the pool.
#[derive(Debug, Clone)]
pub(crate) struct PoolSettings {
    pub size: u32,
    pub busy_timeout: Duration,
    pub connection_timeout: Duration,
    pub synchronous: Synchronous,
    #[cfg(feature = "test-hooks")]
    pub statements: Option<StatementCounter>,
}

/// Connects once directly (so a failure reports the server's own message),
/// migrates, then builds the pool.
pub(crate) fn open_pool(target: Target, settings: &PoolSettings) -> Result<DbPool, OpenError> {
    if settings.size == 0 {
        return Err(OpenError::Config("pool_size must be at least 1".into()));
    }
    let health = Arc::new(Health::new(target.backend().name()));
    let connecting = Arc::new(Connecting::default());
    let manager = Manager {
        target,
        health: health.clone(),
        busy_timeout: settings.busy_timeout,
        synchronous: settings.synchronous,
        connecting: connecting.clone(),
        #[cfg(feature = "test-hooks")]
        statements: settings.statements.clone(),
    };
    let mut first = manager.connect_to_migrate()?;
    migrate(&mut first)?;
    drop(first);
    let pool = Pool::builder()
        .max_size(settings.size)
        .test_on_check_out(true)
        .min_idle(Some(0))
        .connection_timeout(settings.connection_timeout)
        // Health logs the change once; r2d2's own handler would log every
        // failed attempt of an outage.
        .error_handler(Box::new(r2d2::NopErrorHandler))
        .build(manager)
        .map_err(|e| OpenError::Pool(e.to_string()))?;
    Ok(DbPool {
        pool,
        health,
        connecting,
        timeout: settings.connection_timeout,
    })
}
