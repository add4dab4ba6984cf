//! How a handle hears about other processes' commits (WAIT-3a): on
//! PostgreSQL, `NOTIFY` after a commit and one listening connection; on
//! SQLite, `PRAGMA data_version` on one connection of its own. What to do
//! with what is heard is the domain's business (`domain/engine/watch/`).

use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::sql_types::BigInt;
use diesel::{Connection, RunQueryDsl, SqliteConnection};

use super::error::DbError;

/// The channel of this database and schema, computed by the server from
/// the connection's own `search_path`, so clarion databases in different
/// schemas of one PostgreSQL database (notifications are per database)
/// never wake each other's waiters. An identifier as it is: no quoting.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // PostgreSQL only
pub(crate) const CHANNEL_SQL: &str = "'clarion_' || left(md5(coalesce(current_schema(), '')), 16)";

/// The application name of a listening connection, so an operator (or a
/// test) can find it in `pg_stat_activity`.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))] // PostgreSQL only
pub(crate) const LISTENER_APPLICATION: &str = "clarion-listener";

/// WAIT-3a: announces `payloads` on this schema's channel, in one
/// statement, on its own after the commits they describe (a `NOTIFY` inside
/// the transaction would queue every notifying commit on one server-wide
/// lock). SQLite has no notifications: other handles see `data_version`
/// move.
#[cfg(feature = "postgres")]
fn announce(conn: &mut diesel::PgConnection, payloads: &[String]) -> Result<(), DbError> {
    use diesel::sql_types::{Array, Text};
    diesel::sql_query(format!(
        "SELECT pg_notify({CHANNEL_SQL}, payload) FROM unnest($1) AS payload"
    ))
    .bind::<Array<Text>, _>(payloads)
    .execute(conn)?;
    Ok(())
}

/// WAIT-3a: sends a handle's announcements from a thread of its own, so a
/// change's caller does not wait a round trip for its `NOTIFY` (measured:
/// one of a resolve's five). Announcements queued while one is being sent
/// go out together in the next statement, on a connection of the thread's
/// own, opened at the first announcement and again after a failure. It is
/// not a pooled one: the pool opens connections on threads of its own, and
/// a process that exits while one of those is still connecting crashes in
/// libpq's TLS teardown (seen with `clarion answer`). Dropping the handle
/// sends what is queued (waiting at most [`Announcer::FLUSH`]), so a
/// process that answers and exits still wakes other processes' waiters at
/// once; an announcement lost anyway is covered by their poll, like one
/// lost to a crash.
pub(crate) struct Announcer {
    queue: std::sync::Mutex<Option<std::sync::mpsc::Sender<String>>>,
    finished: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Announcer {
    /// How long dropping the handle waits for queued announcements. On a
    /// loaded machine a first TLS connection has taken longer than 2 s, and
    /// a process that exits while this thread still connects crashes in
    /// libpq's TLS teardown (seen once with `clarion answer` under the
    /// PostgreSQL suite); a refused connection ends the wait at once.
    const FLUSH: Duration = Duration::from_secs(10);

    /// Starts the announcing thread for the PostgreSQL database at `url`
    /// (`pooled`: behind a transaction pooler, PROD-1).
    pub(crate) fn start(url: String, pooled: bool) -> std::io::Result<Announcer> {
        let (queue, payloads) = std::sync::mpsc::channel::<String>();
        let (done, finished) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("clarion-announce".to_owned())
            .spawn(move || {
                announce_until_closed(&url, pooled, &payloads);
                let _ = done.send(());
            })?;
        Ok(Announcer {
            queue: std::sync::Mutex::new(Some(queue)),
            finished: std::sync::Mutex::new(finished),
        })
    }

    /// Queues one announcement; never waits for the database.
    pub(crate) fn queue(&self, payload: String) {
        let queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(queue) = queue.as_ref() {
            let _ = queue.send(payload);
        }
    }
}

impl Drop for Announcer {
    fn drop(&mut self) {
        // Closing the queue ends the thread once it has sent what is queued
        // and closed its connection.
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).take();
        let finished = self.finished.lock().unwrap_or_else(|p| p.into_inner());
        let _ = finished.recv_timeout(Self::FLUSH);
    }
}

/// The announcing thread's loop: until the queue closes, each batch of
/// payloads in one statement.
#[cfg(feature = "postgres")]
fn announce_until_closed(url: &str, pooled: bool, payloads: &std::sync::mpsc::Receiver<String>) {
    let mut conn: Option<diesel::PgConnection> = None;
    while let Ok(first) = payloads.recv() {
        let mut batch = vec![first];
        batch.extend(payloads.try_iter());
        let sent = match conn.as_mut() {
            Some(conn) => announce(conn, &batch).map_err(|error| error.to_string()),
            None => super::pool::connect_postgres(url, pooled)
                .map_err(|error| error.to_string())
                .and_then(|opened| {
                    announce(conn.insert(opened), &batch).map_err(|error| error.to_string())
                }),
        };
        if let Err(error) = sent {
            // A fresh connection for the next batch.
            conn = None;
            tracing::warn!(%error, "could not announce changes; other processes' poll will see them");
        }
    }
}

#[cfg(not(feature = "postgres"))]
fn announce_until_closed(_url: &str, _pooled: bool, payloads: &std::sync::mpsc::Receiver<String>) {
    // Only PostgreSQL handles announce; nothing is ever queued here.
    while payloads.recv().is_ok() {}
}

/// WAIT-3a on SQLite: one connection of the handle's own whose
/// `data_version` moves whenever any other connection (of this process or
/// another) commits. It never writes, so every move is someone else's.
pub(crate) struct DataVersion {
    conn: SqliteConnection,
}

#[derive(diesel::QueryableByName)]
struct Version {
    #[diesel(sql_type = BigInt)]
    data_version: i64,
}

impl DataVersion {
    pub(crate) fn open(path: &str, busy_timeout: Duration) -> Result<DataVersion, String> {
        let mut conn = SqliteConnection::establish(path).map_err(|e| e.to_string())?;
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = {}",
            busy_timeout.as_millis()
        ))
        .map_err(|e| e.to_string())?;
        Ok(DataVersion { conn })
    }

    /// One cheap check: the current `data_version`.
    pub(crate) fn read(&mut self) -> Result<i64, DbError> {
        let version: Version =
            diesel::sql_query("PRAGMA data_version").get_result(&mut self.conn)?;
        Ok(version.data_version)
    }
}

#[cfg(feature = "postgres")]
pub(crate) use listen::{Heard, Listener, Stop};

/// The PostgreSQL listening connection. diesel's `notifications_iter` only
/// drains what already arrived (`PQconsumeInput` + `PQnotifies`) and diesel
/// does not expose the connection's socket, so waiting on it with a timeout
/// would mean polling with queries. This connection is plain libpq (the
/// same library diesel links), and its socket is waited on with `poll(2)`
/// beside a pipe that stops the wait at once.
#[cfg(feature = "postgres")]
mod listen {
    use std::ffi::{CStr, CString};
    use std::os::raw::c_char;
    use std::ptr::NonNull;
    use std::time::Duration;

    use pq_sys::{ConnStatusType, ExecStatusType, PGconn};

    use super::{CHANNEL_SQL, LISTENER_APPLICATION};

    /// What one wait of the listener ended with.
    pub(crate) enum Heard {
        /// These payloads (none when the wait timed out).
        Payloads(Vec<String>),
        /// The [`Stop`] was signalled.
        Stopped,
    }

    /// One listening libpq connection, closed on drop.
    pub(crate) struct Listener {
        conn: NonNull<PGconn>,
    }

    // SAFETY: a PGconn may move between threads; it is used by one thread
    // at a time (the owner, through `&mut self`).
    unsafe impl Send for Listener {}

    impl Listener {
        /// Connects to `url` and listens on its schema's channel; the error
        /// is libpq's message.
        pub(crate) fn listen(url: &str) -> Result<Listener, String> {
            let url = CString::new(url).map_err(|e| e.to_string())?;
            let application = CString::new(LISTENER_APPLICATION).map_err(|e| e.to_string())?;
            let keywords: [*const c_char; 3] = [
                c"dbname".as_ptr(),
                c"application_name".as_ptr(),
                std::ptr::null(),
            ];
            let values: [*const c_char; 3] = [url.as_ptr(), application.as_ptr(), std::ptr::null()];
            // SAFETY: both arrays are NULL-terminated and outlive the call;
            // expand_dbname = 1 reads the URL as a connection string, and
            // the later keyword overrides what it says.
            let raw = unsafe { pq_sys::PQconnectdbParams(keywords.as_ptr(), values.as_ptr(), 1) };
            let conn = NonNull::new(raw).ok_or("libpq could not allocate a connection")?;
            let mut listener = Listener { conn };
            if !listener.is_ok() {
                return Err(listener.error());
            }
            // SAFETY: the connection is alive; the processor ignores the
            // server's notices (as diesel's connections do) instead of
            // printing them to stderr.
            unsafe {
                pq_sys::PQsetNoticeProcessor(
                    listener.conn.as_ptr(),
                    Some(ignore_notice),
                    std::ptr::null_mut(),
                );
            }
            let channel =
                CString::new(format!("SELECT {CHANNEL_SQL}")).map_err(|e| e.to_string())?;
            let channel = listener.query_one(&channel)?;
            let listen = CString::new(format!("LISTEN {channel}")).map_err(|e| e.to_string())?;
            listener.exec(&listen)?;
            Ok(listener)
        }

        /// The server process of this connection (`pg_stat_activity.pid`).
        pub(crate) fn backend_pid(&self) -> i32 {
            // SAFETY: the connection is alive until drop.
            unsafe { pq_sys::PQbackendPID(self.conn.as_ptr()) }
        }

        /// Waits until a notification arrives, `timeout` passes or `stop`
        /// is signalled, and returns the payloads heard (none on a timeout
        /// or a stop). An error means the connection is gone.
        pub(crate) fn wait(&mut self, timeout: Duration, stop: &Stop) -> Result<Heard, String> {
            let heard = self.drain()?;
            if !heard.is_empty() {
                return Ok(Heard::Payloads(heard));
            }
            // SAFETY: the connection is alive until drop.
            let socket = unsafe { pq_sys::PQsocket(self.conn.as_ptr()) };
            if socket < 0 {
                return Err(self.error());
            }
            match stop.poll(Some(socket), timeout)? {
                Ready::Stopped => Ok(Heard::Stopped),
                Ready::Socket => self.drain().map(Heard::Payloads),
                Ready::Timeout => Ok(Heard::Payloads(Vec::new())),
            }
        }

        /// Reads what the socket holds and returns the notifications'
        /// payloads.
        fn drain(&mut self) -> Result<Vec<String>, String> {
            let conn = self.conn.as_ptr();
            // SAFETY: the connection is alive until drop; every PGnotify
            // returned is freed once its payload is copied.
            unsafe {
                if pq_sys::PQconsumeInput(conn) == 0 || !self.is_ok() {
                    return Err(self.error());
                }
                let mut heard = Vec::new();
                loop {
                    let notify = pq_sys::PQnotifies(conn);
                    if notify.is_null() {
                        break;
                    }
                    let extra = (*notify).extra;
                    if !extra.is_null() {
                        heard.push(CStr::from_ptr(extra).to_string_lossy().into_owned());
                    }
                    pq_sys::PQfreemem(notify.cast());
                }
                Ok(heard)
            }
        }

        fn exec(&mut self, sql: &CStr) -> Result<(), String> {
            // SAFETY: the connection is alive until drop; the result is
            // cleared before returning.
            unsafe {
                let result = pq_sys::PQexec(self.conn.as_ptr(), sql.as_ptr());
                let ok = !result.is_null()
                    && pq_sys::PQresultStatus(result) == ExecStatusType::PGRES_COMMAND_OK;
                pq_sys::PQclear(result);
                if ok {
                    Ok(())
                } else {
                    Err(self.error())
                }
            }
        }

        /// The one value of a one-row, one-column query.
        fn query_one(&mut self, sql: &CStr) -> Result<String, String> {
            // SAFETY: the connection is alive until drop; the value is
            // copied before the result is cleared.
            unsafe {
                let result = pq_sys::PQexec(self.conn.as_ptr(), sql.as_ptr());
                let value = (!result.is_null()
                    && pq_sys::PQresultStatus(result) == ExecStatusType::PGRES_TUPLES_OK
                    && pq_sys::PQntuples(result) == 1)
                    .then(|| pq_sys::PQgetvalue(result, 0, 0))
                    .filter(|value| !value.is_null())
                    .map(|value| CStr::from_ptr(value).to_string_lossy().into_owned());
                pq_sys::PQclear(result);
                value.ok_or_else(|| self.error())
            }
        }

        fn is_ok(&self) -> bool {
            // SAFETY: the connection is alive until drop.
            unsafe { pq_sys::PQstatus(self.conn.as_ptr()) == ConnStatusType::CONNECTION_OK }
        }

        fn error(&self) -> String {
            // SAFETY: libpq returns a NUL-terminated string it owns.
            unsafe {
                let message = pq_sys::PQerrorMessage(self.conn.as_ptr());
                if message.is_null() {
                    return "the listening connection failed".to_owned();
                }
                CStr::from_ptr(message).to_string_lossy().trim().to_owned()
            }
        }
    }

    extern "C" fn ignore_notice(_: *mut std::ffi::c_void, _: *const c_char) {}

    impl Drop for Listener {
        fn drop(&mut self) {
            // SAFETY: the connection is finished exactly once.
            unsafe { pq_sys::PQfinish(self.conn.as_ptr()) }
        }
    }

    enum Ready {
        Socket,
        Timeout,
        Stopped,
    }

    /// A pipe that ends a [`Listener::wait`] (or a plain sleep) at once:
    /// closing the handle must not wait out a poll interval.
    pub(crate) struct Stop {
        read: i32,
        write: i32,
    }

    impl Stop {
        pub(crate) fn new() -> std::io::Result<Stop> {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors.
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(Stop {
                read: fds[0],
                write: fds[1],
            })
        }

        /// Signals the waiting side; it stays signalled.
        pub(crate) fn signal(&self) {
            // SAFETY: writes one byte from a live buffer to our own pipe.
            let _ = unsafe { libc::write(self.write, [1u8].as_ptr().cast(), 1) };
        }

        /// Waits until `socket` is readable, `timeout` passes or the pipe
        /// is signalled.
        fn poll(&self, socket: Option<i32>, timeout: Duration) -> Result<Ready, String> {
            let mut fds = [
                libc::pollfd {
                    fd: self.read,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: socket.unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let millis = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
            // SAFETY: `fds` is a live array of two pollfd; a negative fd is
            // ignored by poll(2).
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, millis) };
            if ready < 0 {
                let error = std::io::Error::last_os_error();
                if error.kind() == std::io::ErrorKind::Interrupted {
                    return Ok(Ready::Timeout);
                }
                return Err(error.to_string());
            }
            Ok(if fds[0].revents != 0 {
                Ready::Stopped
            } else if fds[1].revents != 0 {
                Ready::Socket
            } else {
                Ready::Timeout
            })
        }

        /// Sleeps for `timeout` unless signalled; true if signalled (or if
        /// the pipe failed, which ends the watcher rather than spin).
        pub(crate) fn sleep(&self, timeout: Duration) -> bool {
            !matches!(self.poll(None, timeout), Ok(Ready::Timeout | Ready::Socket))
        }
    }

    impl Drop for Stop {
        fn drop(&mut self) {
            // SAFETY: both descriptors are ours and closed exactly once.
            unsafe {
                libc::close(self.read);
                libc::close(self.write);
            }
        }
    }
}
