//! The event streams' bookkeeping, below the router's state. HTTP-13: the
//! streams each credential holds open. A stream takes a place when it
//! starts and gives it back when it ends, whichever way it ends (its client
//! gone, the server stopping), since the place is a guard the stream's
//! response owns. HTTP-14: the door through which streams join the
//! router's one follower (`fanout.rs`).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::http::request::Parts;
use axum::response::sse::Event as SseEvent;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::rules::principal::Principal;

/// One SSE message of a stream.
pub(crate) type Message = std::result::Result<SseEvent, Infallible>;

/// A stream handed to the follower once its first page is queued.
pub(crate) struct Joining {
    pub(crate) principal: Principal,
    /// Its credential as the authenticator names it (HTTP-13), with the
    /// request that carried it, to be asked about again (HTTP-10).
    pub(crate) credential: String,
    pub(crate) request: Arc<Parts>,
    /// The position its client has every event up to.
    pub(crate) position: String,
    pub(crate) sender: mpsc::Sender<Message>,
    /// When the credential ends by itself (a web session's expiry).
    pub(crate) ends: Option<Instant>,
}

/// The router's door to its follower: how streams join it.
#[derive(Default)]
pub(crate) struct Fanout {
    /// The running follower's inbox of new streams; `None` while none runs.
    joins: Mutex<Option<mpsc::UnboundedSender<Joining>>>,
}

impl Fanout {
    /// Hands `stream` to the running follower. When none runs (or the one
    /// that ran is ending), returns a new inbox holding it, on which the
    /// caller starts the next follower.
    pub(crate) fn hand_on(&self, stream: Joining) -> Option<mpsc::UnboundedReceiver<Joining>> {
        let mut joins = self.lock();
        let stream = match joins.as_ref() {
            Some(running) => match running.send(stream) {
                Ok(()) => return None,
                Err(mpsc::error::SendError(stream)) => stream,
            },
            None => stream,
        };
        let (sender, receiver) = mpsc::unbounded_channel();
        // The receiver is alive: this cannot fail.
        let _ = sender.send(stream);
        *joins = Some(sender);
        Some(receiver)
    }

    /// The follower reading `joins` may end: true when no stream is
    /// waiting in it, and then the next stream starts another.
    pub(crate) fn leave(&self, joins: &mpsc::UnboundedReceiver<Joining>) -> bool {
        let mut running = self.lock();
        if !joins.is_empty() {
            return false;
        }
        *running = None;
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<mpsc::UnboundedSender<Joining>>> {
        self.joins
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Open streams by credential (a token, a web session, or `""`: the open
/// principal's requests, which carry none).
#[derive(Default)]
pub(crate) struct StreamPlaces {
    open: Mutex<HashMap<String, usize>>,
}

/// One stream's place; dropping it frees the place.
pub(crate) struct StreamPlace {
    places: Arc<StreamPlaces>,
    credential: String,
}

impl StreamPlaces {
    /// A place for one more stream of `credential`, unless it holds `cap`.
    pub(crate) fn take(self: &Arc<Self>, credential: String, cap: usize) -> Option<StreamPlace> {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let held = open.entry(credential.clone()).or_default();
        if *held >= cap {
            return None;
        }
        *held += 1;
        Some(StreamPlace {
            places: self.clone(),
            credential,
        })
    }

    /// How many streams `credential` holds (for tests of freeing).
    #[cfg(test)]
    fn held(&self, credential: &str) -> usize {
        let open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        open.get(credential).copied().unwrap_or(0)
    }
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        let mut open = self
            .places
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(held) = open.get_mut(&self.credential) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                open.remove(&self.credential);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_13_places_are_per_credential_and_freed_on_drop() {
        let places = Arc::new(StreamPlaces::default());
        let first = places.take("a".into(), 2).unwrap();
        let second = places.take("a".into(), 2).unwrap();
        assert!(places.take("a".into(), 2).is_none());
        assert!(places.take("b".into(), 2).is_some());
        drop(first);
        assert_eq!(places.held("a"), 1);
        let third = places.take("a".into(), 2).unwrap();
        drop((second, third));
        assert_eq!(places.held("a"), 0);
    }
}
