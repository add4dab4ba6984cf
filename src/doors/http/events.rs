//! `GET /api/v1/events` (HTTP-6): the event log (EVT-2) as Server-Sent
//! Events. `id:` is the event's position, `event:` its type, `data:` the
//! EVT-2 element. The stream reads the log from its own position whenever
//! the library says events may have been appended (this handle's commits,
//! or other processes' as the handle's watcher hears them, WAIT-3a), so a
//! reader that reconnects with `Last-Event-ID` misses none and sees none
//! twice (EVT-1a). While it waits it holds neither a thread nor a pool
//! connection; a client that goes away ends it at once.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, Notify};
use tokio_stream::wrappers::ReceiverStream;

use crate::domain::engine::Engine;
use crate::domain::events::{is_position, EventPage};
use crate::doors::envelope;
use crate::doors::http::caller::Caller;
use crate::doors::http::error::HttpError;
use crate::doors::http::input::{Input, Kind};
use crate::doors::http::metrics::InFlight;
use crate::doors::http::places::StreamPlace;
use crate::doors::http::state::AppState;
use crate::doors::http::wait::sleep_until;
use crate::doors::operations::Operation;
use crate::error::{Result, ValidationError};
use crate::rules::principal::Principal;

/// Events examined per read of the log (EVT-2's largest page).
const PAGE: i64 = 1000;
/// How soon a stream reads again while events are held back (EVT-1a).
const HELD_BACK_RETRY: Duration = Duration::from_millis(20);
/// Messages queued for a slow client before the reader waits for it.
const QUEUE: usize = 256;

/// HTTP-6: the live event stream.
pub(crate) async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    input: Input,
) -> std::result::Result<Response, HttpError> {
    let query = input.query(&[("after", Kind::Text)])?;
    // AUTH-2 before anything is read.
    Operation::EventsAfter.admit(&caller.principal)?;
    let given = last_event_id(&headers)?.or_else(|| {
        query
            .get("after")
            .and_then(|after| after.as_str())
            .map(str::to_owned)
    });
    let principal = caller.principal.clone();
    let start = match given {
        Some(after) => after,
        None => {
            let principal = principal.clone();
            state
                .blocking(move |engine| {
                    engine.events_head(&Operation::EventsAfter.admit(&principal)?)
                })
                .await??
        }
    };
    // A malformed position is a 400 now, before the stream starts.
    let first = {
        let (principal, start) = (principal.clone(), start.clone());
        state
            .blocking(move |engine| read(engine, &principal, &start))
            .await??
    };
    // HTTP-13, last of the checks: a place among the credential's streams,
    // held until this stream ends.
    let place = state
        .stream_places
        .take(
            caller.credential.clone(),
            state.options.streams_per_credential,
        )
        .ok_or(HttpError::TooManyStreams)?;
    let lasts = caller.lasts(&state).await?;
    let (sender, receiver) = mpsc::channel(QUEUE);
    let open = state.metrics.stream_opened();
    let stream = Follower {
        state,
        caller,
        ends: lasts.map(|left| tokio::time::Instant::now() + left),
        sender,
        _held: (open, place),
    };
    tokio::spawn(stream.follow(start, first));
    // Keep-alives are the follower's: each one checks the credential first.
    Ok(Sse::new(ReceiverStream::new(receiver)).into_response())
}

/// HTTP-16: `Last-Event-ID`, which takes precedence over `?after=`. An
/// empty one is not given; one that is no position (its bytes not visible
/// ASCII included) is a 400, never a silent fall back to `after` or the
/// head.
fn last_event_id(headers: &HeaderMap) -> std::result::Result<Option<String>, ValidationError> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return Ok(None);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if bytes.iter().all(u8::is_ascii_graphic) && is_position(text) => {
            Ok(Some(text.to_owned()))
        }
        _ => Err(ValidationError::new(
            "Last-Event-ID",
            "not an event position",
        )),
    }
}

type Message = std::result::Result<SseEvent, Infallible>;

/// One page of the log as `principal` may see it now (EVT-2).
fn read(engine: &Engine, principal: &Principal, after: &str) -> Result<EventPage> {
    engine.events_after(&Operation::EventsAfter.admit(principal)?, after, Some(PAGE))
}

/// One open stream: what it needs to go on, and what it holds.
struct Follower {
    state: AppState,
    caller: Caller,
    /// When the credential ends by itself (a web session's expiry).
    ends: Option<tokio::time::Instant>,
    sender: mpsc::Sender<Message>,
    _held: (InFlight, StreamPlace),
}

/// What woke a stream that had nothing to send.
enum Woken {
    /// Events may have been appended, or held-back ones become readable.
    Read,
    /// A keep-alive is due, or the credential's end.
    Check,
    /// The client went away, or the server is stopping.
    Gone,
}

impl Follower {
    /// Sends what `page` holds, then reads on whenever woken, until the
    /// client goes away, the server stops (HTTP-8 ends every stream) or
    /// the credential stops naming the caller (HTTP-10).
    async fn follow(self, mut position: String, mut page: EventPage) {
        let woken = Arc::new(Notify::new());
        let _subscription = {
            let woken = woken.clone();
            // `notify_one` keeps a permit when nobody waits: no wake-up is
            // lost between a read and the next wait.
            self.state
                .engine
                .subscribe_events(Arc::new(move || woken.notify_one()))
        };
        let keep_alive = self.state.options.keep_alive;
        // The credential was checked as the stream opened; it is checked
        // again before each delivery, and at the latest a keep-alive later.
        let mut checked = true;
        let mut next_check = tokio::time::Instant::now() + keep_alive;
        loop {
            if !page.events.is_empty() || page.reset {
                // HTTP-10: nothing is delivered after a failed check.
                if !checked {
                    if !self.still_signed_in().await {
                        return;
                    }
                    next_check = tokio::time::Instant::now() + keep_alive;
                }
                if !send_page(&self.sender, &page).await {
                    return;
                }
            }
            checked = false;
            let progressed = page.next != position;
            position = page.next.clone();
            // A page that examined something may not be the last: read on
            // at once. Events held back by a transaction still open
            // elsewhere (EVT-1a) are announced by nobody when it ends: read
            // again shortly. Otherwise wait to be woken, checking the
            // credential at each keep-alive.
            if !progressed {
                loop {
                    match self.wait(&woken, page.held_back, next_check).await {
                        Woken::Read => break,
                        Woken::Gone => return,
                        Woken::Check => {
                            if !self.still_signed_in().await {
                                return;
                            }
                            next_check = tokio::time::Instant::now() + keep_alive;
                            let alive = SseEvent::default().comment("");
                            if self.sender.send(Ok(alive)).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
            let (principal, after) = (self.caller.principal.clone(), position.clone());
            page = match self
                .state
                .blocking(move |engine| read(engine, &principal, &after))
                .await
            {
                Ok(Ok(page)) => page,
                Ok(Err(error)) => {
                    tracing::warn!(%error, "an event stream could not read the log; ending it");
                    return;
                }
                Err(_) => return,
            };
        }
    }

    /// Waits for something to do: a wake-up, a due check, or the end.
    async fn wait(
        &self,
        woken: &Notify,
        held_back: bool,
        next_check: tokio::time::Instant,
    ) -> Woken {
        // An end that passed while the credential still held (clocks
        // apart) is left to the keep-alive checks.
        let ends = self.ends.filter(|at| *at > tokio::time::Instant::now());
        tokio::select! {
            () = woken.notified() => Woken::Read,
            () = tokio::time::sleep(HELD_BACK_RETRY), if held_back => Woken::Read,
            () = tokio::time::sleep_until(next_check) => Woken::Check,
            () = sleep_until(ends), if ends.is_some() => Woken::Check,
            () = self.sender.closed() => Woken::Gone,
            () = self.state.options.shutdown.begun() => Woken::Gone,
        }
    }

    /// HTTP-10: the credential still names the caller; otherwise the
    /// stream's last message is `event: revoked`.
    async fn still_signed_in(&self) -> bool {
        match self.caller.still_signed_in(&self.state).await {
            Ok(true) => return true,
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, "an event stream could not check its credential; ending it");
                return false;
            }
        }
        let revoked = SseEvent::default()
            .event("revoked")
            .data(HttpError::AuthenticationRequired.envelope().body_text());
        let _ = self.sender.send(Ok(revoked)).await;
        false
    }
}

/// One page as SSE messages: `reset` first when events were pruned
/// (EVT-3) or the position was past the head (EVT-4, the page then goes on
/// from the head). False when the client is gone.
async fn send_page(sender: &mpsc::Sender<Message>, page: &EventPage) -> bool {
    if page.reset {
        let reset = SseEvent::default().event("reset").data("{}");
        if sender.send(Ok(reset)).await.is_err() {
            return false;
        }
    }
    for event in &page.events {
        let message = SseEvent::default()
            .id(event.position.clone())
            .event(event.event_type.clone())
            .data(envelope::event(event).to_string());
        if sender.send(Ok(message)).await.is_err() {
            return false;
        }
    }
    true
}
