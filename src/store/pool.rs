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

/// Test hook: counts what the pool's connections send to the database
/// (LIST-11: a page's statements do not grow with the page; #41: the
/// statements, transactions and round trips of each operation).
///
/// One counter is shared by every connection of a pool (each connection
/// holds a clone that also keeps that connection's own transaction state).
/// What it counts, from diesel's instrumentation events:
///
/// - a **call**: one `StartQuery` — a prepared statement run, or a batch
///   (`batch_execute`) sent as one text;
/// - **statements**: every statement of a call — a batch
///   `BEGIN; …; COMMIT` counts each of its statements;
/// - **transactions**: explicit `BEGIN`s (whatever follows: `IMMEDIATE`,
///   an isolation level); **outside transactions**: statements run while
///   no explicit transaction is open (each is a transaction of its own),
///   leaving out `PRAGMA` and `SET`, which read or change settings only;
/// - **prepares**: statements prepared for the connection's statement
///   cache (`CacheQuery`: a statement's first run on the connection);
/// - **round trips**: on PostgreSQL every call is one (a batch is sent as
///   one simple-protocol query, a prepared statement as one
///   bind-and-execute), and preparing a statement for the cache is one
///   more (`PQprepare`); on SQLite, which runs in the process, a call into
///   the library — every call, and no prepare.
///
/// The pool's own liveness check (`SELECT 1`) is not counted: it depends on
/// timing; nor is any statement that starts with [`UNCOUNTED`] (the test
/// hooks' own reads of the database's write counters).
#[cfg(feature = "test-hooks")]
#[derive(Debug, Clone, Default)]
pub struct StatementCounter {
    tallies: std::sync::Arc<Tallies>,
    /// This connection's: whether an explicit transaction is open.
    in_transaction: bool,
    /// This connection's: whether a prepare costs a round trip.
    remote: bool,
}

/// The marker that keeps a statement out of [`StatementCounter`]'s counts.
#[cfg(feature = "test-hooks")]
pub const UNCOUNTED: &str = "/* uncounted */";

#[cfg(feature = "test-hooks")]
#[derive(Debug, Default)]
struct Tallies {
    calls: std::sync::atomic::AtomicU64,
    statements: std::sync::atomic::AtomicU64,
    transactions: std::sync::atomic::AtomicU64,
    outside_transactions: std::sync::atomic::AtomicU64,
    prepares: std::sync::atomic::AtomicU64,
    round_trips: std::sync::atomic::AtomicU64,
    /// Each call's SQL, when recording.
    log: std::sync::Mutex<Option<Vec<String>>>,
}

/// What a [`StatementCounter`] counted (see there); the difference of two
/// readings is what happened between them.
#[cfg(feature = "test-hooks")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Prepared statements run and batches sent.
    pub calls: u64,
    /// Statements, each statement of a batch counted.
    pub statements: u64,
    /// Explicit transactions begun.
    pub transactions: u64,
    /// Statements run outside an explicit transaction (but `PRAGMA`, `SET`).
    pub outside_transactions: u64,
    /// Statements prepared for the connection's statement cache.
    pub prepares: u64,
    /// Round trips to the database (see [`StatementCounter`]).
    pub round_trips: u64,
}

#[cfg(feature = "test-hooks")]
impl std::ops::Sub for Counts {
    type Output = Counts;

    fn sub(self, earlier: Counts) -> Counts {
        Counts {
            calls: self.calls - earlier.calls,
            statements: self.statements - earlier.statements,
            transactions: self.transactions - earlier.transactions,
            outside_transactions: self.outside_transactions - earlier.outside_transactions,
            prepares: self.prepares - earlier.prepares,
            round_trips: self.round_trips - earlier.round_trips,
        }
    }
}

#[cfg(feature = "test-hooks")]
impl StatementCounter {
    /// Calls so far: prepared statements run and batches sent (a batch of
    /// several statements is one).
    pub fn count(&self) -> u64 {
        self.tallies.calls.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Everything counted so far.
    pub fn counts(&self) -> Counts {
        use std::sync::atomic::Ordering::SeqCst;
        let t = &self.tallies;
        Counts {
            calls: t.calls.load(SeqCst),
            statements: t.statements.load(SeqCst),
            transactions: t.transactions.load(SeqCst),
            outside_transactions: t.outside_transactions.load(SeqCst),
            prepares: t.prepares.load(SeqCst),
            round_trips: t.round_trips.load(SeqCst),
        }
    }

    /// A counter that also keeps each call's SQL (see [`Self::take_log`]).
    pub fn recording() -> StatementCounter {
        let counter = StatementCounter::default();
        *counter.log() = Some(Vec::new());
        counter
    }

    /// The SQL of each call since the last take, oldest first, each on
    /// one line and cut at 160 characters (a recording counter's; empty
    /// for another).
    pub fn take_log(&self) -> Vec<String> {
        self.log().as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn log(&self) -> std::sync::MutexGuard<'_, Option<Vec<String>>> {
        self.tallies.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The clone one connection of `backend` holds.
    fn for_connection(&self, backend: Backend) -> StatementCounter {
        StatementCounter {
            tallies: self.tallies.clone(),
            in_transaction: false,
            remote: backend == Backend::Postgres,
        }
    }

    fn add(counter: &std::sync::atomic::AtomicU64, n: u64) {
        counter.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
    }

    /// One call of `sql` (a statement, or a batch of them).
    fn call(&mut self, sql: &str) {
        Self::add(&self.tallies.calls, 1);
        Self::add(&self.tallies.round_trips, 1);
        if let Some(log) = self.log().as_mut() {
            let line = sql.split_whitespace().collect::<Vec<_>>().join(" ");
            log.push(line.chars().take(160).collect());
        }
        for head in statement_heads(sql) {
            Self::add(&self.tallies.statements, 1);
            let first = head.split(' ').next().unwrap_or_default();
            match first {
                "BEGIN" => {
                    Self::add(&self.tallies.transactions, 1);
                    self.in_transaction = true;
                }
                "ROLLBACK" if head.starts_with("ROLLBACK TO") => {}
                "COMMIT" | "END" | "ROLLBACK" => self.in_transaction = false,
                "PRAGMA" | "SET" => {}
                _ if !self.in_transaction => Self::add(&self.tallies.outside_transactions, 1),
                _ => {}
            }
        }
    }
}

/// The first two words (upper case) of every statement in `sql`, a
/// statement or a batch: statements end at a `;` outside quotes and
/// comments, and a statement is one that holds more than whitespace and
/// comments. (diesel shows a prepared statement as its SQL followed by
/// `-- binds: […]`.)
#[cfg(feature = "test-hooks")]
fn statement_heads(sql: &str) -> Vec<String> {
    enum In {
        Code,
        Quoted(char),
        LineComment,
        BlockComment,
    }
    let head = |code: &str| {
        let words: Vec<&str> = code.split_whitespace().take(2).collect();
        words.join(" ").to_ascii_uppercase()
    };
    let mut heads = Vec::new();
    let mut state = In::Code;
    // The statement being read, comments and quoted text left out.
    let mut code = String::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            In::Quoted(quote) => {
                if c == quote {
                    state = In::Code;
                }
            }
            In::LineComment => {
                if c == '\n' {
                    state = In::Code;
                }
            }
            In::BlockComment => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    state = In::Code;
                }
            }
            In::Code => match c {
                '-' if chars.peek() == Some(&'-') => state = In::LineComment,
                '/' if chars.peek() == Some(&'*') => {
                    chars.next();
                    state = In::BlockComment;
                }
                ';' => {
                    if !code.trim().is_empty() {
                        heads.push(head(&code));
                    }
                    code.clear();
                }
                '\'' | '"' => {
                    code.push_str(" _ ");
                    state = In::Quoted(c);
                }
                _ => code.push(c),
            },
        }
        if !matches!(state, In::Code) && !code.ends_with(' ') {
            code.push(' ');
        }
    }
    if !code.trim().is_empty() {
        heads.push(head(&code));
    }
    heads
}

#[cfg(feature = "test-hooks")]
impl diesel::connection::Instrumentation for StatementCounter {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        use diesel::connection::InstrumentationEvent;
        match event {
            InstrumentationEvent::StartQuery { query, .. } => {
                let sql = query.to_string();
                if sql != "SELECT 1" && !sql.starts_with(UNCOUNTED) {
                    self.call(&sql);
                }
            }
            InstrumentationEvent::CacheQuery { sql, .. } if !sql.starts_with(UNCOUNTED) => {
                Self::add(&self.tallies.prepares, 1);
                if self.remote {
                    Self::add(&self.tallies.round_trips, 1);
                }
            }
            _ => {}
        }
    }
}

#[cfg(all(test, feature = "test-hooks"))]
mod tests {
    use super::statement_heads;

    #[test]
    fn a_batch_is_split_into_its_statements() {
        assert_eq!(
            statement_heads("BEGIN; SELECT 1 FROM t WHERE a = 'x;y' FOR SHARE; COMMIT"),
            ["BEGIN", "SELECT 1", "COMMIT"]
        );
        assert_eq!(
            statement_heads("/* c; */ UPDATE t SET a = 'it''s; \"q;\"' -- binds: [\"a;b\"]\n;  ;"),
            ["UPDATE T"]
        );
        assert_eq!(
            statement_heads("INSERT INTO t VALUES (?) -- binds: [\"x\"]"),
            ["INSERT INTO"]
        );
        assert_eq!(
            statement_heads("begin immediate;rollback to savepoint s;/**/commit"),
            ["BEGIN IMMEDIATE", "ROLLBACK TO", "COMMIT"]
        );
        assert!(statement_heads(" -- nothing\n").is_empty());
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
            conn.set_instrumentation(counter.for_connection(self.target.backend()));
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
