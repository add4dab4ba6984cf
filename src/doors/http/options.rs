//! How a router behaves ([`HttpOptions`]), the shutdown signal it obeys
//! ([`Shutdown`]), and HTTP-3's body limit: plain settings every part of
//! the door reads, below all of them.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::rules::limits::{WaitBounds, HTTP_WAIT};

/// HTTP-3: the largest request body accepted (1 MiB); above it, `413`.
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Tells a router (and [`serve`](super::serve)) that the server is stopping (HTTP-8):
/// from [`Shutdown::begin`] on, open waits and new requests answer
/// `503 {"error": "server shutting down"}`. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Shutdown {
    sender: Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown {
            sender: Arc::new(watch::Sender::new(false)),
        }
    }
}

impl Shutdown {
    /// A signal that has not begun.
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Begins the shutdown; every clone sees it. Idempotent.
    pub fn begin(&self) {
        self.sender.send_replace(true);
    }

    /// Whether [`Shutdown::begin`] was called.
    pub fn is_begun(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once the shutdown has begun (at once if it already has).
    pub async fn begun(&self) {
        let mut receiver = self.sender.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = receiver.wait_for(|begun| *begun).await;
    }
}

/// How the router behaves; builder-style.
///
/// ```
/// let options = clarion::http::HttpOptions::new()
///     .allow_origin("https://inbox.example.com")
///     .max_calls(16)
///     .secure_cookies(true);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct HttpOptions {
    pub(super) allowed_origins: Vec<String>,
    pub(super) max_calls: usize,
    pub(super) secure_cookies: bool,
    pub(super) shutdown: Shutdown,
    pub(super) wait_cap: Duration,
    pub(super) keep_alive: Duration,
    pub(super) inbox_api: Option<String>,
    pub(super) loopback_hosts_only: bool,
    pub(super) streams_per_credential: usize,
    pub(super) stream_reads: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_origins: Vec::new(),
            max_calls: 32,
            secure_cookies: false,
            shutdown: Shutdown::new(),
            wait_cap: HTTP_WAIT.cap,
            keep_alive: KEEP_ALIVE,
            inbox_api: None,
            loopback_hosts_only: false,
            streams_per_credential: STREAMS_PER_CREDENTIAL,
            stream_reads: STREAM_READS,
        }
    }
}

impl HttpOptions {
    /// The defaults: no other origin, 32 concurrent library calls, waits
    /// cut at 55 s, cookies without `Secure`.
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// An origin (`https://host[:port]`) besides the server's own that may
    /// send cookie-authenticated unsafe requests (HTTP-4) and gets CORS with
    /// credentials (HTTP-8). May be given several times.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        let origin = origin.into().trim_end_matches('/').to_ascii_lowercase();
        if !self.allowed_origins.contains(&origin) {
            self.allowed_origins.push(origin);
        }
        self
    }

    /// How many synchronous library calls (and authentications, and the
    /// brief checks of waits) run at once on the blocking pool (HTTP-1);
    /// more wait for a free place. Waits hold no place between checks.
    pub fn max_calls(mut self, calls: usize) -> Self {
        self.max_calls = calls.max(1);
        self
    }

    /// Marks the session cookie `Secure` (HTTP-4): set it when the server
    /// is reached over TLS (behind a reverse proxy), or browsers would
    /// send the cookie over plain HTTP too.
    pub fn secure_cookies(mut self, secure: bool) -> Self {
        self.secure_cookies = secure;
        self
    }

    /// The shutdown signal the router obeys (HTTP-8); give the same one to
    /// [`serve`](super::serve).
    pub fn shutdown(mut self, shutdown: Shutdown) -> Self {
        self.shutdown = shutdown;
        self
    }

    /// Cuts every wait at `cap` instead of HTTP-5's 55 s (never longer):
    /// for proxies with shorter read timeouts, and for tests.
    pub fn wait_cap(mut self, cap: Duration) -> Self {
        self.wait_cap = cap.min(HTTP_WAIT.cap);
        self
    }

    /// How often an idle event stream sends a comment line (HTTP-6: 15 s),
    /// so proxies keep it open; at least 100 ms.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every.max(Duration::from_millis(100));
        self
    }

    /// The web inbox at `/` uses the API at `origin` (`https://host[:port]`)
    /// instead of its own origin's (UI-5): for a page served apart from
    /// the API. That server must allow this one's origin
    /// ([`HttpOptions::allow_origin`]); the page's Content-Security-Policy
    /// admits `origin` and nothing else besides its own.
    pub fn inbox_api(mut self, origin: &str) -> Result<Self, InvalidOrigin> {
        let origin = origin_of(origin).ok_or_else(|| InvalidOrigin(origin.to_owned()))?;
        self.inbox_api = Some(origin);
        Ok(self)
    }

    /// Answers only requests addressed to a loopback name (HTTP-11):
    /// `localhost`, `127.0.0.1` or `[::1]`, any letter case, any port; any
    /// other `Host`, or none, is a `421` before anything else. For a server
    /// that serves requests without a credential (`--open-as`, which sets
    /// it): a page on a name rebound to 127.0.0.1 sends its own name, so it
    /// cannot act as the open principal. Off by default: behind a reverse
    /// proxy, `Host` is the proxy's.
    pub fn loopback_hosts_only(mut self, only: bool) -> Self {
        self.loopback_hosts_only = only;
        self
    }

    /// How many event streams one credential may hold open at once
    /// (HTTP-13, default 16; at least 1): the next gets `429` with
    /// `Retry-After: 5` until one of them ends. The credential is what
    /// [`Authenticator::credential`](super::Authenticator::credential)
    /// names.
    pub fn streams_per_credential(mut self, streams: usize) -> Self {
        self.streams_per_credential = streams.max(1);
        self
    }

    /// How many reads of the event log and credential checks for the
    /// event streams run at once (HTTP-14, default 4; at least 1), on a
    /// pool of their own: however many streams are open, they never take
    /// the places of [`HttpOptions::max_calls`].
    pub fn stream_reads(mut self, reads: usize) -> Self {
        self.stream_reads = reads.max(1);
        self
    }

    /// The blocking threads the router may occupy at most (both of its
    /// pools): a runtime serving it needs at least this many
    /// (`max_blocking_threads`).
    pub fn blocking_threads(&self) -> usize {
        self.max_calls + self.stream_reads
    }

    /// HTTP-5: this router's wait bounds (the cap as set by
    /// [`HttpOptions::wait_cap`]).
    pub(crate) fn wait_bounds(&self) -> WaitBounds {
        WaitBounds {
            default: HTTP_WAIT.default.min(self.wait_cap),
            cap: self.wait_cap,
        }
    }

    pub(crate) fn allows_origin(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.allowed_origins.contains(&origin)
    }
}

/// HTTP-6: a comment line this often keeps proxies from closing the stream.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// HTTP-14: the event streams' own pool, unless the host says otherwise.
pub(crate) const STREAM_READS: usize = 4;

/// HTTP-13: event streams per credential unless the host says otherwise.
pub const STREAMS_PER_CREDENTIAL: usize = 16;

/// A text that is not an origin, given to [`HttpOptions::inbox_api`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an origin (http[s]://host[:port], no path): {0:?}")]
pub struct InvalidOrigin(pub String);

/// `scheme://host[:port]`, lowercased, when `text` is one (an origin, not
/// a URL with a path); for [`HttpOptions::inbox_api`].
pub(crate) fn origin_of(text: &str) -> Option<String> {
    let text = text.trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = text.split_once("://")?;
    let bare = !authority.is_empty()
        && authority
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    (matches!(scheme, "http" | "https") && bare).then_some(text)
}
