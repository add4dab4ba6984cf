//! The HTTP door under test (HTTP-9): a real server on a loopback port,
//! its own runtime on a thread of its own, and a real client. Tokens for
//! the usual principals are made through the library.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clarion::http::{self, Authenticator, HttpOptions, ServeOptions, Shutdown, TokenAuthenticator};
use clarion::{Clarion, Grant, Principal};
use reqwest::blocking::{Client, RequestBuilder, Response};

use super::{kill_after, TestDb};

/// A running server; dropping it shuts it down and waits for it.
pub struct Server {
    pub base: String,
    pub shutdown: Shutdown,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.begin();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The name of a server's runtime threads (at most 15 bytes, as Linux
/// keeps them), so a test can count them among the binary's many.
fn thread_name(base: &str) -> String {
    let port = base.rsplit(':').next().unwrap_or_default();
    format!("srv-{port}")
}

impl Server {
    /// How many threads this server's runtime has now (workers and its
    /// blocking pool), from /proc.
    pub fn threads(&self) -> usize {
        let name = thread_name(&self.base);
        std::fs::read_dir("/proc/self/task")
            .map(|tasks| {
                tasks
                    .filter_map(|task| task.ok())
                    .filter(|task| {
                        std::fs::read_to_string(task.path().join("comm"))
                            .is_ok_and(|comm| comm.trim_end() == name)
                    })
                    .count()
            })
            .unwrap_or(0)
    }

    /// The server's address, `127.0.0.1:<port>`.
    pub fn authority(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Stops the server and waits until it has stopped.
    pub fn stop(mut self) {
        self.shutdown.begin();
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the server thread");
        }
    }
}

/// Serves `router` on a fresh loopback port.
pub fn serve_router(router: axum::Router, shutdown: Shutdown, options: ServeOptions) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    serve_router_on(listener, router, shutdown, options)
}

/// Serves `router` on `listener`, bound already (so its address could be
/// given to another server first).
pub fn serve_router_on(
    listener: TcpListener,
    router: axum::Router,
    shutdown: Shutdown,
    options: ServeOptions,
) -> Server {
    listener.set_nonblocking(true).expect("non-blocking");
    let base = format!("http://{}", listener.local_addr().unwrap());
    let name = thread_name(&base);
    let stop = shutdown.clone();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            // As `clarion serve` sizes it: max_calls (32) and a margin.
            .max_blocking_threads(40)
            .thread_name(name)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            http::serve(listener, router, stop, options)
                .await
                .expect("serve");
        });
        runtime.shutdown_timeout(Duration::from_secs(1));
    });
    Server {
        base,
        shutdown,
        thread: Some(thread),
    }
}

/// The router over `inbox` with `auth` and `options` (its shutdown is the
/// server's).
pub fn start_with(inbox: &Clarion, auth: impl Authenticator, options: HttpOptions) -> Server {
    let shutdown = Shutdown::new();
    let router = http::router(inbox.clone(), auth, options.shutdown(shutdown.clone()));
    serve_router(router, shutdown, ServeOptions::new())
}

/// The router with the built-in token authenticator and default options.
pub fn start(db: &TestDb) -> Server {
    start_with(db, TokenAuthenticator::new(db), HttpOptions::new())
}

/// Bearer tokens for the usual principals.
pub struct Tokens {
    pub system: String,
    pub alice: String,
    pub bob: String,
    /// Alice's agent with both grants.
    pub alice_bot: String,
    /// Alice's agent with no grant at all.
    pub alice_bot_none: String,
}

pub fn tokens(db: &Clarion) -> Tokens {
    let make = |principal: Principal| db.add_token(&principal, "test").unwrap().token;
    Tokens {
        system: make(Principal::System),
        alice: make(Principal::user("alice")),
        bob: make(Principal::user("bob")),
        alice_bot: make(Principal::agent("alice", "bot", Grant::ALL)),
        alice_bot_none: make(Principal::agent("alice", "bot", [])),
    }
}

/// The one client of the binary (a clone shares its connection pool and
/// its one runtime thread): tests that count threads run beside these.
pub fn client() -> Client {
    static CLIENT: std::sync::OnceLock<Client> = std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // No pooled connections: a server that refuses a request before
            // reading its body (401, 403, 413) closes that connection, and a
            // pooled one could be reused in the moment before it sees so.
            Client::builder()
                .timeout(Duration::from_secs(90))
                .pool_max_idle_per_host(0)
                .build()
                .expect("client")
        })
        .clone()
}

/// Sends a GET on a connection of its own, to read later with
/// [`read_raw`]: many requests in flight from one thread.
pub fn send_raw(server: &Server, path: &str, token: &str) -> std::net::TcpStream {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(server.authority()).expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n",
        server.authority()
    );
    stream.write_all(request.as_bytes()).expect("send");
    stream
}

/// The status and body of the reply on a connection [`send_raw`] opened.
pub fn read_raw(stream: std::net::TcpStream) -> (u16, String) {
    let (status, reply) = read_reply(stream);
    let body = reply
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Reads a raw HTTP/1.1 reply to its end: its status and its whole text.
pub fn read_reply(mut stream: std::net::TcpStream) -> (u16, String) {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_secs(90)))
        .expect("read timeout");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read the reply");
    let status = reply
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, reply)
}

/// A reply: status, headers and body text.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: String,
}

impl Reply {
    pub fn of(response: Response) -> Reply {
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().expect("body");
        Reply {
            status,
            headers,
            body,
        }
    }

    /// `<status> <body>`, as the envelope snapshots write it.
    pub fn text(&self) -> String {
        format!("{} {}", self.status, self.body)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Sends and reads a reply.
pub fn send(request: RequestBuilder) -> Reply {
    Reply::of(request.send().expect("request"))
}

/// Sends a request that the server refuses before reading its large body
/// (401, 413): the server answers and closes, so a client still writing
/// may meet a broken pipe and never read the answer, a race HTTP/1 leaves
/// open. Sends again, up to five times, on such transport errors only.
pub fn send_refused(request: RequestBuilder) -> Reply {
    let mut attempt = 1;
    loop {
        let this = request.try_clone().expect("a body that can be sent again");
        match this.send() {
            Ok(response) => return Reply::of(response),
            Err(error) if attempt < 5 && (error.is_request() || error.is_body()) => attempt += 1,
            Err(error) => panic!("request: {error:?}"),
        }
    }
}

/// A POST of JSON text with `token`, not sent yet.
pub fn post_request(server: &Server, token: &str, path: &str, body: &str) -> RequestBuilder {
    client()
        .post(server.url(path))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body.to_owned())
}

/// A GET with `token`.
pub fn get(server: &Server, token: &str, path: &str) -> Reply {
    send(client().get(server.url(path)).bearer_auth(token))
}

/// A POST of JSON text with `token`.
pub fn post(server: &Server, token: &str, path: &str, body: &str) -> Reply {
    send(post_request(server, token, path, body))
}

/// `<status> <body>` of a library envelope, for byte comparisons.
pub fn envelope_text(envelope: clarion::envelope::Envelope) -> String {
    format!("{} {}", envelope.status, envelope.body_text())
}

/// `<status> <body>` of a library result.
pub fn result_text<T>(
    result: clarion::Result<T>,
    ok: impl FnOnce(&T) -> clarion::envelope::Envelope,
) -> String {
    envelope_text(match &result {
        Ok(value) => ok(value),
        Err(error) => clarion::envelope::error(error),
    })
}

/// Runs the `clarion` binary with `args` to its end.
pub fn clarion(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(args)
        .env_remove("CLARION_DATABASE_URL")
        .output()
        .expect("run clarion")
}

/// A running `clarion serve` and the base URL it printed.
pub struct Served {
    child: Child,
    pub base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// SIGTERM, then the exit status within `within`.
    pub fn terminate(&mut self, within: Duration) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < within, "clarion serve did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// How long a `clarion serve` of the tests may live at most.
const SERVE_NET: Duration = Duration::from_secs(600);

/// Starts `clarion serve` with `args` and reads its `listening on` line.
pub fn serve(url: &str, args: &[&str]) -> Served {
    serve_to(url, args, Stdio::inherit(), "warn")
}

/// Starts `clarion serve` with `args`, logging at `info` and above into
/// `log`.
pub fn serve_logged(url: &str, args: &[&str], log: &std::fs::File) -> Served {
    serve_to(url, args, log.try_clone().unwrap().into(), "info")
}

fn serve_to(url: &str, args: &[&str], stderr: Stdio, level: &str) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clarion"))
        .args(["serve", "--database-url", url, "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("CLARION_DATABASE_URL")
        .env("RUST_LOG", level)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start clarion serve");
    // Only a net for a test that dies without dropping its `Served` (whose
    // drop kills the server): it must outlast every run a test bounds
    // itself (Schemathesis's 150 s), also on a loaded machine.
    kill_after(child.id(), SERVE_NET);
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("not a listening line: {line:?}"))
        .to_owned();
    assert!(
        base.starts_with("http://127.0.0.1:") && !base.ends_with(":0"),
        "{base}"
    );
    Served { child, base }
}

/// Signs in with `token` (HTTP-4) and returns the session cookie
/// (`name=value`) and the whole `Set-Cookie` header.
pub fn web_sign_in(server: &Server, token: &str) -> (String, String) {
    let reply = send(
        client()
            .post(server.url("/api/v1/session"))
            .header("content-type", "application/json")
            .body(serde_json::json!({"token": token}).to_string()),
    );
    assert_eq!(reply.text(), r#"200 {"ok":true}"#);
    let set = reply.header("set-cookie").expect("a cookie").to_owned();
    let cookie = set.split(';').next().unwrap().to_owned();
    (cookie, set)
}

/// A raw HTTP/1.1 reply read off a socket, as a [`Reply`] (its body sent
/// whole, with a `Content-Length`).
pub fn raw_reply(text: &str) -> Reply {
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let mut headers = reqwest::header::HeaderMap::new();
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            if let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(name.trim().as_bytes()),
                reqwest::header::HeaderValue::from_str(value.trim()),
            ) {
                headers.append(name, value);
            }
        }
    }
    Reply {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// The router on `db` (token authentication), served with `options`.
pub fn serve_with(db: &TestDb, options: ServeOptions) -> Server {
    let shutdown = Shutdown::new();
    let router = http::router(
        db.clarion.clone(),
        TokenAuthenticator::new(db),
        HttpOptions::new().shutdown(shutdown.clone()),
    );
    serve_router(router, shutdown, options)
}

/// A POST whose body stops after its first byte (HTTP-12); its reply is
/// read from the returned connection.
pub fn stalled_post(server: &Server, token: &str) -> std::net::TcpStream {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(server.authority()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let head = format!(
        "POST /api/v1/rpc/summary HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        server.authority(),
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream
}
