//! HTTP-14: one follower per router serves every event stream. At each
//! wake-up it reads the log once per distinct principal among the streams
//! that may have something to read, from the lowest position among that
//! principal's streams, and gives each stream what follows its own
//! position; so a thousand streams of one user at the head cost one
//! `events_after`. Its reads and the streams' credential checks (HTTP-10,
//! one batched check per wake-up) run on the streams' own pool, never on
//! the pool every other request uses. Each stream has a bounded queue; a
//! stream whose queue stays full for a keep-alive interval is closed, and
//! its client reconnects with `Last-Event-ID` and misses nothing.
//!
//! The follower runs while streams are open: the first stream starts it,
//! and it ends when the last one has ended, so a router holds no task, no
//! subscription and no reference to its engine while nobody follows.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::http::request::Parts;
use axum::response::sse::Event as SseEvent;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::domain::engine::Engine;
use crate::domain::events::{Event, EventPage, Position};
use crate::doors::drive::sleep_until;
use crate::doors::envelope::{self, Envelope};
use crate::doors::http::auth::Authentication;
use crate::doors::http::error::HttpError;
use crate::doors::http::places::{Joining, Message};
use crate::doors::http::state::AppState;
use crate::doors::operations::Operation;
use crate::error::{outage_status, Error, Result};
use crate::rules::principal::Principal;
use crate::rules::vocabulary::Channel;

/// Events examined per read of the log (EVT-2's largest page).
pub(crate) const PAGE: i64 = 1000;
/// Messages a stream's queue holds: a whole page, its `reset` and a
/// keep-alive. A client that has not taken them is slow.
pub(crate) const QUEUE: usize = PAGE as usize + 8;
/// How soon the follower reads again while events are held back by a
/// transaction still open elsewhere (EVT-1a: nobody announces its end),
/// or while a slow stream has events it could not take yet.
const RETRY: Duration = Duration::from_millis(20);

/// OPS-7: how many streams the follower hands a message before it yields.
/// Each message wakes its stream's task, which writes it out on the same
/// worker threads as every other request; in slices, a request that
/// arrives during a burst to thousands of streams waits behind one slice
/// of writes, not behind the whole burst.
const SLICE: usize = 256;

/// Yields to the runtime before the `n`th stream of a burst that starts a
/// new [`SLICE`].
async fn pace(n: usize) {
    if n > 0 && n.is_multiple_of(SLICE) {
        tokio::task::yield_now().await;
    }
}

/// HTTP-6: a comment line (`:`), the stream's keep-alive; also its first
/// message, so the status and headers go out the moment it opens rather
/// than with its first event.
pub(crate) fn comment_message() -> SseEvent {
    SseEvent::default().comment("")
}

/// HTTP-6: `event: reset` (EVT-3, EVT-4): list again.
pub(crate) fn reset_message() -> SseEvent {
    SseEvent::default().event("reset").data("{}")
}

/// PROD-2: `event: unavailable`, the last message of a stream whose log
/// could not be read (the database is away): `data:` the error body.
pub(crate) fn unavailable_message(error: &Envelope) -> SseEvent {
    SseEvent::default()
        .event("unavailable")
        .data(error.body_text())
}

/// HTTP-6: one event: `id:` its position, `event:` its type, `data:` the
/// EVT-2 element.
pub(crate) fn event_message(event: &Event) -> SseEvent {
    SseEvent::default()
        .id(event.position.clone())
        .event(event.event_type.clone())
        .data(envelope::event(event).to_string())
}

/// One page of the log as `principal` may see it now (EVT-2).
pub(crate) fn read(engine: &Engine, principal: &Principal, after: &str) -> Result<EventPage> {
    engine.events_after(
        &Operation::EventsAfter.admit(principal, Channel::Http)?,
        after,
        Some(PAGE),
    )
}

/// HTTP-14: hands `stream` to the router's follower, starting one if
/// none runs.
pub(crate) fn join(state: &AppState, stream: Joining) {
    if let Some(joins) = state.fanout.hand_on(stream) {
        tokio::spawn(Follower::new(state.clone(), joins).run());
    }
}

/// One stream as the follower serves it.
struct Stream {
    principal: Principal,
    /// Its principal's place in [`Follower::principals`].
    who: usize,
    credential: String,
    /// Its credential's place in [`Follower::credentials`].
    key: usize,
    request: Arc<Parts>,
    position: String,
    at: Position,
    sender: mpsc::Sender<Message>,
    ends: Option<Instant>,
    /// Since when its queue has been full.
    full_since: Option<Instant>,
}

impl Stream {
    fn new(joining: Joining) -> Stream {
        Stream {
            at: Position::of(&joining.position).unwrap_or_default(),
            principal: joining.principal,
            who: 0,
            credential: joining.credential,
            key: 0,
            request: joining.request,
            position: joining.position,
            sender: joining.sender,
            ends: joining.ends,
            full_since: None,
        }
    }

    /// Queues `message`; false when the queue is full or the client gone.
    fn offer(&mut self, message: SseEvent) -> bool {
        match self.sender.try_send(Ok(message)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                self.full_since.get_or_insert_with(Instant::now);
                false
            }
            Err(TrySendError::Closed(_)) => false,
        }
    }

    /// HTTP-10: the stream's last message, then it ends.
    fn revoke(&mut self) {
        let revoked = SseEvent::default()
            .event("revoked")
            .data(HttpError::AuthenticationRequired.envelope().body_text());
        let _ = self.sender.try_send(Ok(revoked));
    }

    /// Queues what `read` (from at most this stream's position) holds
    /// after its position, and moves the position on as far as it
    /// queued. A read that is a reset is this stream's own.
    fn take(&mut self, read: &Read) {
        let reset = read.page.reset;
        if reset && !self.offer(reset_message()) {
            return;
        }
        for (at, position, message) in &read.messages {
            if *at <= self.at && !reset {
                continue;
            }
            if !self.offer(message.clone()) {
                return;
            }
            self.moved_to(position, *at);
        }
        if read.next > self.at || reset {
            self.moved_to(&read.page.next, read.next);
        }
        self.full_since = None;
    }

    /// Its queue has stayed full for `keep_alive`: its client is too slow.
    fn too_slow(&self, now: Instant, keep_alive: Duration) -> bool {
        self.full_since
            .is_some_and(|since| now.duration_since(since) >= keep_alive)
    }

    fn moved_to(&mut self, position: &str, at: Position) {
        position.clone_into(&mut self.position);
        self.at = at;
    }

    /// A read with nothing new for this stream still moves it to the
    /// read's end: its next read starts there, instead of walking again
    /// what its principal may not see (a stream of a user who sees few of
    /// the log's events would otherwise read ever longer stretches of it).
    /// Nothing is delivered, so nothing needs a credential check.
    fn pass(&mut self, read: &Read) {
        if !read.page.reset && read.next > self.at && !self.has_news(read) {
            self.moved_to(&read.page.next, read.next);
        }
    }

    /// Whether `read` holds something this stream has not had.
    fn has_news(&self, read: &Read) -> bool {
        read.page.reset || read.messages.iter().any(|(at, _, _)| *at > self.at)
    }
}

/// One read of the log for one principal: where it started, the page,
/// and each event's message built once for all the principal's streams.
struct Read {
    after: String,
    page: EventPage,
    next: Position,
    messages: Vec<(Position, String, SseEvent)>,
}

impl Read {
    fn new(after: String, page: EventPage) -> Read {
        let messages = page
            .events
            .iter()
            .filter_map(|event| {
                let at = Position::of(&event.position)?;
                Some((at, event.position.clone(), event_message(event)))
            })
            .collect();
        Read {
            after,
            next: Position::of(&page.next).unwrap_or_default(),
            page,
            messages,
        }
    }
}

/// Keys (principals, credentials) each once, named by their place: at a
/// wake-up the per-stream work indexes by place and hashes nothing, so
/// thousands of streams cost what their distinct keys cost.
struct Places<K> {
    keys: Vec<K>,
    index: HashMap<K, usize>,
}

impl<K: Eq + std::hash::Hash + Clone> Places<K> {
    fn new() -> Places<K> {
        Places {
            keys: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn place(&mut self, key: &K) -> usize {
        if let Some(place) = self.index.get(key) {
            return *place;
        }
        self.keys.push(key.clone());
        self.index.insert(key.clone(), self.keys.len() - 1);
        self.keys.len() - 1
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

/// What the follower does next.
enum Due {
    /// Read for these principals (after a wake-up, a join, a retry).
    Read,
    /// Keep-alives, each after its stream's credential check.
    KeepAlive,
    /// A credential's end has come.
    Ends,
    /// The server is stopping.
    Stop,
}

struct Follower {
    state: AppState,
    joins: mpsc::UnboundedReceiver<Joining>,
    streams: Vec<Stream>,
    principals: Places<Principal>,
    credentials: Places<String>,
    /// By principal place: whose streams may have something to read.
    dirty: Vec<bool>,
}

impl Follower {
    fn new(state: AppState, joins: mpsc::UnboundedReceiver<Joining>) -> Follower {
        Follower {
            state,
            joins,
            streams: Vec::new(),
            principals: Places::new(),
            credentials: Places::new(),
            dirty: Vec::new(),
        }
    }

    async fn run(mut self) {
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
        let mut next_keep_alive = Instant::now() + keep_alive;
        let mut retry: Option<Instant> = None;
        loop {
            let ends = self.streams.iter().filter_map(|stream| stream.ends).min();
            let shutdown = self.state.options.shutdown.clone();
            let due = tokio::select! {
                joined = self.joins.recv() => {
                    if let Some(joined) = joined {
                        self.add(joined);
                    }
                    Due::Read
                }
                () = woken.notified() => {
                    self.dirty.fill(true);
                    Due::Read
                }
                () = sleep_until(retry), if retry.is_some() => Due::Read,
                () = tokio::time::sleep_until(next_keep_alive) => Due::KeepAlive,
                () = sleep_until(ends), if ends.is_some() => Due::Ends,
                () = shutdown.begun() => Due::Stop,
            };
            // Streams that joined meanwhile are served by this turn too.
            while let Ok(joined) = self.joins.try_recv() {
                self.add(joined);
            }
            let had = self.streams.len();
            match due {
                Due::Read => retry = self.read_and_deliver().await,
                Due::KeepAlive => {
                    self.keep_alive().await;
                    next_keep_alive = Instant::now() + keep_alive;
                }
                Due::Ends => self.end_due().await,
                Due::Stop => self.streams.clear(),
            }
            self.close_slow(keep_alive);
            self.streams.retain(|stream| !stream.sender.is_closed());
            self.renumber(had);
            if self.streams.is_empty() && self.leave() {
                return;
            }
        }
    }

    fn add(&mut self, joined: Joining) {
        let mut stream = Stream::new(joined);
        stream.who = self.principals.place(&stream.principal);
        stream.key = self.credentials.place(&stream.credential);
        self.dirty.resize(self.principals.len(), false);
        self.dirty[stream.who] = true;
        self.streams.push(stream);
    }

    /// After streams ended (`had` were open): the places again, of the
    /// streams left only, so the tables never outgrow the streams; dirt
    /// is kept.
    fn renumber(&mut self, had: usize) {
        if self.streams.len() >= had {
            return;
        }
        let dirty = std::mem::take(&mut self.dirty);
        let (mut principals, mut credentials) = (Places::new(), Places::new());
        let mut renewed = Vec::new();
        for stream in &mut self.streams {
            let was_dirty = dirty.get(stream.who).copied().unwrap_or(true);
            stream.who = principals.place(&stream.principal);
            stream.key = credentials.place(&stream.credential);
            renewed.resize(principals.len(), false);
            renewed[stream.who] |= was_dirty;
        }
        (self.principals, self.credentials, self.dirty) = (principals, credentials, renewed);
    }

    /// Ends the follower when no stream is open and none is joining; the
    /// next stream starts another.
    fn leave(&mut self) -> bool {
        self.state.fanout.leave(&self.joins)
    }

    /// A stream whose queue stayed full for a keep-alive interval is
    /// closed: its client is too slow, and reconnects where it was.
    fn close_slow(&mut self, keep_alive: Duration) {
        let now = Instant::now();
        self.streams
            .retain(|stream| !stream.too_slow(now, keep_alive));
    }

    /// One wake-up: a read per dirty principal, from the lowest position
    /// among its streams; one check of the credentials about to receive
    /// something; then each stream queues what follows its own position.
    /// Returns when to read again without being woken, if ever.
    async fn read_and_deliver(&mut self) -> Option<Instant> {
        let reads = self.read_dirty().await;
        let mut again: Option<Instant> = None;
        let mut soon = |at: Instant| {
            again = Some(again.map_or(at, |again: Instant| again.min(at)));
        };
        for (who, read) in reads.iter().enumerate() {
            match read {
                Some(Ok(read)) if read.page.full => soon(Instant::now()),
                Some(Ok(read)) if read.page.held_back => soon(Instant::now() + RETRY),
                // Only the streams at the read's position take a reset;
                // the others read from their own next.
                Some(Ok(read)) if read.page.reset => soon(Instant::now()),
                Some(Ok(_)) | None => {}
                Some(Err(why)) => self.end_streams_of(who, why.clone()),
            }
        }
        let read_of = |stream: &Stream| match reads.get(stream.who) {
            Some(Some(Ok(read))) => Some(read),
            _ => None,
        };
        let mut receiving = Vec::new();
        for (index, stream) in self.streams.iter_mut().enumerate() {
            let Some(read) = read_of(stream) else {
                continue;
            };
            if (!read.page.reset || stream.position == read.after) && stream.has_news(read) {
                receiving.push(index);
            } else {
                stream.pass(read);
            }
        }
        // Every delivery is checked in its own wake-up: a check made
        // earlier (a keep-alive's) may predate a revocation that the
        // event being delivered follows.
        let ended = self.check(&receiving).await;
        for (n, index) in receiving.into_iter().enumerate() {
            if ended[index] {
                continue;
            }
            pace(n).await;
            let stream = &mut self.streams[index];
            if let Some(read) = read_of(stream) {
                stream.take(read);
                if stream.full_since.is_some() {
                    self.dirty[stream.who] = true;
                    soon(Instant::now() + RETRY);
                }
            }
        }
        self.drop_ended(&ended);
        for (who, read) in reads.iter().enumerate() {
            if let Some(Ok(read)) = read {
                if read.page.full || read.page.held_back || read.page.reset {
                    self.dirty[who] = true;
                }
            }
        }
        again
    }

    /// The log for each dirty principal, read once from the lowest
    /// position among its streams, on the streams' pool (at most
    /// `stream_reads` at once); by principal place, `None` for one not
    /// read, `Err` for a read that failed.
    async fn read_dirty(&mut self) -> Vec<Option<Result<Read, SseEvent>>> {
        let mut lowest: Vec<Option<(Position, &str)>> = vec![None; self.principals.len()];
        for stream in &self.streams {
            if !self.dirty[stream.who] {
                continue;
            }
            let entry = &mut lowest[stream.who];
            if entry.is_none_or(|(at, _)| stream.at < at) {
                *entry = Some((stream.at, stream.position.as_str()));
            }
        }
        self.dirty.fill(false);
        let mut reads = JoinSet::new();
        for (who, lowest) in lowest.into_iter().enumerate() {
            let Some((_, after)) = lowest else {
                continue;
            };
            let (state, reader, after) = (
                self.state.clone(),
                self.principals.keys[who].clone(),
                after.to_owned(),
            );
            reads.spawn(async move {
                let from = after.clone();
                let page = state
                    .stream_blocking(move |engine| read(engine, &reader, &from))
                    .await;
                let read = match page {
                    Ok(Ok(page)) => Ok(Read::new(after, page)),
                    Ok(Err(error)) => {
                        // PROD-2: an outage is logged once, by the pool.
                        if !matches!(error, Error::Unavailable { .. }) {
                            tracing::warn!(%error, "event streams could not read the log; ending them");
                        }
                        Err(unavailable_message(&envelope::error(&error)))
                    }
                    Err(error) => Err(unavailable_message(&error.envelope())),
                };
                (who, read)
            });
        }
        let mut done: Vec<Option<Result<Read, SseEvent>>> = std::iter::repeat_with(|| None)
            .take(self.principals.len())
            .collect();
        while let Some(read) = reads.join_next().await {
            if let Ok((who, read)) = read {
                done[who] = Some(read);
            }
        }
        done
    }

    /// PROD-2: the streams of `who` get `why` as their last message and
    /// end; a client resumes from its position (`Last-Event-ID`).
    fn end_streams_of(&mut self, who: usize, why: SseEvent) {
        for stream in self.streams.iter_mut().filter(|stream| stream.who == who) {
            let _ = stream.sender.try_send(Ok(why.clone()));
        }
        self.streams.retain(|stream| stream.who != who);
    }

    /// HTTP-10: keep-alives, each after its stream's credential check.
    async fn keep_alive(&mut self) {
        let all: Vec<usize> = (0..self.streams.len()).collect();
        let ended = self.check(&all).await;
        for index in all {
            if !ended[index] {
                pace(index).await;
                self.streams[index].offer(comment_message());
            }
        }
        self.drop_ended(&ended);
    }

    /// HTTP-10: streams whose credential's end has come are checked; one
    /// that still holds (clocks apart) is left to the keep-alive checks.
    async fn end_due(&mut self) {
        let now = Instant::now();
        let due: Vec<usize> = (0..self.streams.len())
            .filter(|index| self.streams[*index].ends.is_some_and(|at| at <= now))
            .collect();
        let ended = self.check(&due).await;
        for index in &due {
            self.streams[*index].ends = None;
        }
        self.drop_ended(&ended);
    }

    /// HTTP-10: checks the credentials of the streams at `indexes`, each
    /// distinct credential once and all in one call of the authenticator,
    /// on the streams' pool. Returns, by stream, those to end: those whose
    /// credential no longer names their principal, each sent `revoked`,
    /// and those that could not be checked.
    async fn check(&mut self, indexes: &[usize]) -> Vec<bool> {
        let mut ended = vec![false; self.streams.len()];
        // By credential place: its slot among the requests checked.
        let mut slots: Vec<Option<usize>> = vec![None; self.credentials.len()];
        let mut requests: Vec<Arc<Parts>> = Vec::new();
        for index in indexes {
            let stream = &self.streams[*index];
            if slots[stream.key].is_none() {
                slots[stream.key] = Some(requests.len());
                requests.push(stream.request.clone());
            }
        }
        if requests.is_empty() {
            return ended;
        }
        let auth = self.state.auth.clone();
        let answers = self
            .state
            .stream_blocking(move |_| {
                let requests: Vec<&Parts> = requests.iter().map(Arc::as_ref).collect();
                auth.authenticate_all(&requests)
            })
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "event streams could not check their credentials; ending them");
                Vec::new()
            });
        for index in indexes {
            let stream = &mut self.streams[*index];
            let answer = slots[stream.key].and_then(|slot| answers.get(slot));
            match answer {
                Some(Authentication::Bearer(now) | Authentication::Cookie(now))
                    if *now == stream.principal =>
                {
                    continue;
                }
                // Not checked (the authenticator failed): ended, but not
                // told it was signed out.
                Some(Authentication::Failed(cause)) => {
                    tracing::warn!(%cause, "an event stream could not check its credential; ending it");
                }
                // PROD-2: said once by the pool; the client resumes later.
                Some(Authentication::Unavailable(outage)) => {
                    let envelope = envelope::refused(outage_status(*outage), outage.message());
                    let _ = stream.sender.try_send(Ok(unavailable_message(&envelope)));
                }
                None => {}
                Some(_) => stream.revoke(),
            }
            ended[*index] = true;
        }
        ended
    }

    fn drop_ended(&mut self, ended: &[bool]) {
        if !ended.contains(&true) {
            return;
        }
        let mut index = 0;
        self.streams.retain(|_| {
            let keep = !ended[index];
            index += 1;
            keep
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(positions: &[&str], next: &str) -> EventPage {
        let events = positions
            .iter()
            .map(|position| Event {
                position: (*position).to_owned(),
                event_type: "bundle.asked".into(),
                at: crate::store::Timestamp::from_micros(0),
                pending_id: format!("p{position}"),
                task_id: String::new(),
                data: serde_json::Value::Null,
            })
            .collect();
        EventPage {
            events,
            next: next.into(),
            reset: false,
            held_back: false,
            full: false,
        }
    }

    fn read(positions: &[&str], next: &str) -> Read {
        Read::new(String::new(), page(positions, next))
    }

    fn stream(position: &str, queue: usize) -> (Stream, mpsc::Receiver<Message>) {
        let (sender, receiver) = mpsc::channel(queue);
        let request = axum::http::Request::new(()).into_parts().0;
        let joining = Joining {
            principal: Principal::user("alice"),
            credential: String::new(),
            request: Arc::new(request),
            position: position.into(),
            sender,
            ends: None,
        };
        (Stream::new(joining), receiver)
    }

    /// HTTP-14: a full queue stops a stream where it is: the next read
    /// gives it what it could not take, none twice; a stream full for a
    /// keep-alive interval is too slow.
    #[tokio::test]
    async fn http_14_a_full_queue_holds_the_position_and_times_out() {
        let (mut slow, mut client) = stream("1", 2);
        slow.take(&read(&["1", "2", "3", "4"], "4"));
        assert_eq!(slow.position, "3", "queued 2 and 3, not 4");
        let since = slow.full_since.expect("full");
        let keep_alive = Duration::from_secs(15);
        assert!(!slow.too_slow(since + keep_alive / 2, keep_alive));
        assert!(slow.too_slow(since + keep_alive, keep_alive));
        for _ in 0..2 {
            let _taken = client.recv().await.unwrap().unwrap();
        }
        // The follower reads from the lowest position again.
        slow.take(&read(&["3", "4", "5"], "5"));
        assert_eq!(slow.position, "5");
        assert!(slow.full_since.is_none(), "caught up");
        assert_eq!(client.len(), 2, "4 and 5, not 3 again");
    }

    /// HTTP-14: a page read from a lower position (another stream's) gives
    /// this one only what follows its own, and moves it to the page's end.
    #[test]
    fn http_14_each_stream_takes_what_follows_its_own_position() {
        let (mut ahead, client) = stream("3", 8);
        assert!(!ahead.has_news(&read(&["2", "3"], "3")));
        ahead.take(&read(&["2", "3", "5"], "6"));
        assert_eq!(client.len(), 1);
        assert_eq!(ahead.position, "6");
    }

    /// HTTP-14: a read with nothing new for a stream (its principal sees
    /// none of the log's newest events) moves it to the read's end, so
    /// its next read does not walk that stretch again; a reset does not.
    #[test]
    fn http_14_a_read_with_nothing_new_moves_the_stream_on() {
        let (mut idle, client) = stream("3", 8);
        idle.pass(&read(&[], "9"));
        assert_eq!((idle.position.as_str(), client.len()), ("9", 0));
        idle.pass(&read(&["2"], "4"));
        assert_eq!(idle.position, "9", "never back");
        let mut reset = read(&[], "12");
        reset.page.reset = true;
        idle.pass(&reset);
        assert_eq!(idle.position, "9", "a reset is delivered, not passed");
    }
}
