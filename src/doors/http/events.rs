//! `GET /api/v1/events` (HTTP-6): the event log (EVT-2) as Server-Sent
//! Events. `id:` is the event's position, `event:` its type, `data:` the
//! EVT-2 element. The request is checked and its first page read here;
//! then the router's one follower (HTTP-14, `fanout.rs`) serves the
//! stream from its position whenever the library says events may have
//! been appended (this handle's commits, or other processes' as the
//! handle's watcher hears them, WAIT-3a), so a reader that reconnects
//! with `Last-Event-ID` misses none and sees none twice (EVT-1a). While
//! it waits it holds neither a thread nor a pool connection; a client
//! that goes away frees its place at once.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::Sse;
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;

use crate::domain::events::{is_position, EventPage};
use crate::doors::http::caller::Caller;
use crate::doors::http::error::HttpError;
use crate::doors::http::fanout::{
    comment_message, event_message, join, read, reset_message, QUEUE,
};
use crate::doors::http::input::{Input, Kind};
use crate::doors::http::metrics::InFlight;
use crate::doors::http::places::{Joining, Message, StreamPlace};
use crate::doors::http::state::AppState;
use crate::doors::operations::Operation;
use crate::error::ValidationError;
use crate::rules::vocabulary::Channel;

/// HTTP-6: the live event stream.
pub(crate) async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    input: Input,
) -> std::result::Result<Response, HttpError> {
    let query = input.query(&[("after", Kind::Text)])?;
    // AUTH-2 before anything is read.
    Operation::EventsAfter.admit(&caller.principal, Channel::Http)?;
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
                .stream_blocking(move |engine| {
                    engine.events_head(&Operation::EventsAfter.admit(&principal, Channel::Http)?)
                })
                .await??
        }
    };
    // A malformed position is a 400 now, before the stream starts.
    let first = {
        let (principal, start) = (principal.clone(), start.clone());
        state
            .stream_blocking(move |engine| read(engine, &principal, &start))
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
    queue_first(&sender, &first);
    // HTTP-14: from now on the router's one follower serves it; its
    // keep-alives are the follower's, each after a credential check.
    join(
        &state,
        Joining {
            principal,
            credential: caller.credential.clone(),
            request: caller.request(),
            position: first.next,
            sender,
            ends: lasts.map(|left| tokio::time::Instant::now() + left),
        },
    );
    let body = Body {
        messages: ReceiverStream::new(receiver),
        _held: (state.metrics.stream_opened(), place),
    };
    Ok(Sse::new(body).into_response())
}

/// What the client reads, holding the stream's place (HTTP-13) and its
/// count in the metrics: both freed the moment the response is dropped,
/// whether the follower ended it or the client went away.
struct Body {
    messages: ReceiverStream<Message>,
    _held: (InFlight, StreamPlace),
}

impl Stream for Body {
    type Item = Message;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Message>> {
        Pin::new(&mut self.get_mut().messages).poll_next(context)
    }
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

/// The first page, queued before the stream is handed on: `reset` first
/// when events were pruned (EVT-3) or the position was past the head
/// (EVT-4; the page then goes on from the head). A new queue holds a
/// whole page.
fn queue_first(sender: &mpsc::Sender<Message>, page: &EventPage) {
    let _ = sender.try_send(Ok(comment_message()));
    if page.reset {
        let _ = sender.try_send(Ok(reset_message()));
    }
    for event in &page.events {
        let _ = sender.try_send(Ok(event_message(event)));
    }
}
