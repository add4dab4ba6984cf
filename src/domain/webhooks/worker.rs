//! HOOK-2, HOOK-4, PROD-4: the webhook worker. A thread of the handle
//! finds the enabled endpoints with events after their cursors and hands
//! each to a thread of its own, which reads the event log as `system`
//! (EVT-1a's order, through the one reader) from the endpoint's cursor and
//! delivers what matches, one event at a time, signed (HOOK-3), with a
//! blocking HTTP client: a slow or hanging endpoint delays only itself. An
//! endpoint is delivered by one worker at a time, under a lease in the
//! database, and by one thread of it; the cursor moves past an event once
//! it is delivered or does not match, and only while the lease is this
//! worker's. Closing the handle (REL-7) cancels the requests in flight.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use diesel::prelude::*;
use serde_json::Value;

use crate::domain::bundle::load_stored;
use crate::domain::engine::signal::Wake;
use crate::domain::engine::Engine;
use crate::domain::events::{Logged, Position};
use crate::domain::webhooks::endpoint::{endpoint_columns, load, Endpoint};
use crate::domain::webhooks::signing::{event_body, event_id, signature_header, test_body};
use crate::domain::webhooks::target::refused_address;
use crate::error::{Error, Result};
use crate::rules::limits::{
    webhook_retry_delay, WEBHOOK_ENDPOINTS_AT_ONCE, WEBHOOK_FIRST_RETRY, WEBHOOK_GIVE_UP,
    WEBHOOK_TIMEOUT,
};
use crate::rules::principal::Principal;
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::{EventType, WebhookState};
use crate::store::schema::webhooks;
use crate::store::{IdKind, IdSource, UuidV7Ids};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// How the worker delivers (HOOK-2, HOOK-4): short values let tests run in
/// seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookOptions {
    timeout: Duration,
    first_retry: Duration,
    give_up: Duration,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        WebhookOptions {
            timeout: WEBHOOK_TIMEOUT,
            first_retry: WEBHOOK_FIRST_RETRY,
            give_up: WEBHOOK_GIVE_UP,
        }
    }
}

impl WebhookOptions {
    /// The defaults: 10 s per delivery, a first retry after 5 s, failing
    /// after 3 days.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long one delivery may take (a slower one failed).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The delay before the first retry; each later one doubles, up to an
    /// hour.
    pub fn first_retry(mut self, delay: Duration) -> Self {
        self.first_retry = delay;
        self
    }

    /// How long an event may keep failing before its endpoint is marked
    /// `failing`.
    pub fn give_up(mut self, after: Duration) -> Self {
        self.give_up = after;
        self
    }

    /// A worker's hold on an endpoint: longer than one delivery, so it
    /// lapses only when the worker is gone.
    fn lease(self) -> Duration {
        self.timeout * 2 + Duration::from_secs(1)
    }
}

impl Endpoint {
    /// HOOK-2: whether it receives an event of `event_type` recorded in
    /// `workspace_id`.
    fn matches(&self, event_type: &str, workspace_id: &str) -> bool {
        let typed = self.events.is_empty() || self.events.split(',').any(|t| t == event_type);
        let placed = self.workspace_id.is_empty() || self.workspace_id == workspace_id;
        typed && placed
    }

    /// HOOK-3: the secrets that sign at `now`: the current one, and during
    /// a rotation's overlap the previous one after it.
    fn signing_secrets(&self, now: i64) -> Vec<&str> {
        let mut secrets = vec![self.secret.as_str()];
        if let (Some(previous), Some(until)) = (&self.previous_secret, self.previous_until) {
            if now < until {
                secrets.push(previous);
            }
        }
        secrets
    }
}

/// How long a round sleeps when nothing is due sooner: the bound within
/// which an event reaches an endpoint when no wake-up came.
const IDLE: Duration = Duration::from_secs(1);

/// How soon a round looks again while events are held back by a
/// transaction still open elsewhere (EVT-1a: nobody announces its end).
const HELD_BACK: Duration = Duration::from_millis(50);

/// Events read per page of the log.
const PAGE: i64 = 100;

/// HOOK-2: a blocking client that never follows a redirect (a 3xx is a
/// failure) and reads any status as an answer. PROD-4: unless
/// `allow_private`, it connects only to the addresses its resolver
/// checked ([`TargetResolver`]), directly (a proxy would be what is
/// checked and connected to instead of the receiver).
fn agent(options: WebhookOptions, allow_private: bool) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(options.timeout))
        .max_redirects(0)
        .max_redirects_will_error(false)
        .http_status_as_error(false)
        .user_agent(concat!("clarion-webhooks/", env!("CARGO_PKG_VERSION")));
    if allow_private {
        return config.build().into();
    }
    ureq::Agent::with_parts(
        config.proxy(None).build(),
        DefaultConnector::new(),
        TargetResolver,
    )
}

/// PROD-4: resolves a delivery's host as ureq would, then refuses the
/// whole delivery when any address it resolved to is one inside this
/// machine or its network (the connection is made only to the addresses
/// returned here, so what is checked is what is connected to, even when
/// the name resolves differently than when it was added).
#[derive(Debug)]
struct TargetResolver;

impl Resolver for TargetResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> std::result::Result<ResolvedSocketAddrs, ureq::Error> {
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err(refused_target(
                "the URL carries a user name or password".to_owned(),
            ));
        }
        let resolved = DefaultResolver::default().resolve(uri, config, timeout)?;
        for address in resolved.iter() {
            if let Some(what) = refused_address(address.ip()) {
                let host = uri.host().unwrap_or_default();
                let literal = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok();
                return Err(refused_target(if literal {
                    format!("{host} is {what}")
                } else {
                    format!("{host} resolved to {}, {what}", address.ip())
                }));
            }
        }
        Ok(resolved)
    }
}

/// The error a refused target is told apart by in [`post`].
fn refused_target(why: String) -> ureq::Error {
    ureq::Error::Io(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("refused to deliver: {why} (the endpoint was not added with allow_private)"),
    ))
}

/// What one attempt came to.
enum Outcome {
    /// A 2xx.
    Delivered,
    /// `410 Gone`: the receiver wants no more.
    Gone,
    /// Anything else: a status, a timeout, a connection error.
    Failed(String),
}

/// HOOK-3: one signed `POST` of `body` to `url`: the status it was
/// answered with, or why there was no answer.
fn post(
    agent: &ureq::Agent,
    url: &str,
    secrets: &[&str],
    id: &str,
    body: &str,
) -> std::result::Result<u16, String> {
    let timestamp = chrono::Utc::now().timestamp();
    let signature = signature_header(secrets, id, timestamp, body.as_bytes());
    let sent = agent
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .send(body.as_bytes());
    match sent {
        Ok(response) => Ok(response.status().as_u16()),
        Err(ureq::Error::Timeout(_)) => Err("timed out".to_owned()),
        Err(ureq::Error::Io(error)) if error.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(error.to_string())
        }
        Err(error) => Err(error.to_string()),
    }
}

/// HOOK-2: what an attempt's answer means.
fn outcome(answer: std::result::Result<u16, String>) -> Outcome {
    match answer {
        Ok(200..=299) => Outcome::Delivered,
        Ok(410) => Outcome::Gone,
        Ok(status) => Outcome::Failed(format!("answered {status}")),
        Err(why) => Outcome::Failed(why),
    }
}

/// What `webhook test` got (HOOK-3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestDelivery {
    /// The receiver answered with this status.
    Answered(u16),
    /// No answer: a timeout or a connection error, and why.
    Failed(String),
}

/// HOOK-3's `webhook test`: one signed `webhook.test` now, outside the
/// cursor, with a fresh `webhook-id`; what it got.
pub(crate) fn send_test(engine: &Engine, id: &str, timeout: Duration) -> Result<TestDelivery> {
    let endpoint = engine.webhook_endpoint(id)?;
    let now = engine.now();
    let body = test_body(now);
    let message = format!("evt_test_{}", UuidV7Ids.new_id(IdKind::Webhook));
    let secrets = endpoint.signing_secrets(now.as_micros());
    let agent = agent(
        WebhookOptions::new().timeout(timeout),
        endpoint.allow_private,
    );
    Ok(
        match post(&agent, &endpoint.url, &secrets, &message, &body) {
            Ok(status) => TestDelivery::Answered(status),
            Err(why) => TestDelivery::Failed(why),
        },
    )
}

/// PROD-4: how long a stop waits for the deliveries it cancelled to end.
/// A request cancelled mid-flight ends at once; one still connecting
/// (which nothing interrupts) is left to end by its timeout, delivering
/// nothing (the client fails every request once it is shut down).
const STOP_WAIT: Duration = Duration::from_secs(1);

/// HOOK-4, PROD-4: the worker a thread of the handle runs (`domain/open.rs`
/// starts it), round after round. A round hands each endpoint with
/// something to deliver to a thread of its own, so a slow, hanging or
/// failing endpoint holds up only itself; an endpoint is served by one
/// thread at a time, under its lease, in order.
pub(crate) struct Worker {
    /// This worker's name in the leases it takes.
    id: String,
    /// PROD-4: for endpoints without `allow_private` …
    guarded: ureq::Agent,
    /// … and for those with it.
    open: ureq::Agent,
    options: WebhookOptions,
    /// Set by a stop: no attempt starts any more, and one in flight was
    /// cancelled rather than failed.
    stopping: AtomicBool,
    tasks: Mutex<Tasks>,
    /// Signalled whenever an endpoint's thread lets go of it.
    ended: Condvar,
}

/// The endpoints this worker is delivering, and how to ask for a round.
#[derive(Default)]
struct Tasks {
    /// Each endpoint a thread serves, and whether a round found it had
    /// more while that thread ran (the round left it alone).
    running: HashMap<String, bool>,
    /// Every thread started that may not have ended.
    threads: Vec<JoinHandle<()>>,
    /// A round passed over endpoints because enough were served at once.
    waiting: bool,
    /// The round thread's nudge …
    wake: Option<Wake>,
    /// … and whether one was wanted before it was given.
    missed: bool,
}

/// Whether a round may hand an endpoint to a thread of its own.
enum Slot {
    Free,
    /// A thread serves it already.
    Busy,
    /// As many endpoints as may be are being served.
    Full,
    Stopping,
}

/// What serving an endpoint came to.
enum Served {
    /// The log was read to its end (or the lease was lost, or the endpoint
    /// answered `410`).
    Done,
    /// An attempt failed: the event is tried again at `next_attempt_at`.
    Retry,
    /// What follows is held back by a transaction still open elsewhere:
    /// a round looks again soon.
    HeldBack,
    /// The worker stopped: nothing was recorded of the attempt.
    Cancelled,
}

impl Worker {
    pub(crate) fn new(options: WebhookOptions) -> Worker {
        Worker {
            id: UuidV7Ids.new_id(IdKind::Webhook),
            guarded: agent(options, false),
            open: agent(options, true),
            options,
            stopping: AtomicBool::new(false),
            tasks: Mutex::default(),
            ended: Condvar::new(),
        }
    }

    /// The round thread's nudge: an endpoint's thread asks for a round
    /// with it when it ends (a retry's time, or what a round found for it
    /// meanwhile).
    pub(crate) fn wake_with(&self, wake: Wake) {
        let missed = {
            let mut tasks = self.tasks();
            tasks.wake = Some(wake.clone());
            std::mem::take(&mut tasks.missed)
        };
        if missed {
            wake();
        }
    }

    /// One round, a failure logged: how long to sleep before the next.
    pub(crate) fn round_or_idle(self: &Arc<Self>, engine: &Arc<Engine>) -> Duration {
        self.round(engine).unwrap_or_else(|error| {
            if !quiet(&error) && !self.is_stopping() {
                tracing::warn!(%error, "a webhook round failed; it runs again");
            }
            IDLE
        })
    }

    /// One round: every enabled endpoint that is due and has events after
    /// its cursor is handed to a thread of its own, which delivers it as
    /// far as it goes; returns how long to sleep before the next.
    fn round(self: &Arc<Self>, engine: &Arc<Engine>) -> Result<Duration> {
        let now = engine.now().as_micros();
        let mut enabled: Vec<Endpoint> = engine.read(|conn| {
            Ok(webhooks::table
                .filter(webhooks::state.eq(WebhookState::Enabled.as_str()))
                .order((webhooks::created_at, webhooks::id))
                .select(endpoint_columns())
                .load(conn)?)
        })?;
        // PROD-4: the least recently tried first (then the oldest), so
        // when more endpoints have work than are served at once, each gets
        // its turn.
        enabled.sort_by_key(|endpoint| endpoint.last_attempt_at.unwrap_or(i64::MIN));
        let scope = system_scope()?;
        // Whether anything follows a cursor: one read for each cursor, as
        // endpoints that are caught up share the head.
        let mut followed: BTreeMap<Option<Position>, bool> = BTreeMap::new();
        let mut sleep = IDLE;
        for endpoint in enabled {
            if let Some(next) = endpoint.next_attempt_at.filter(|next| *next > now) {
                sleep = sleep.min(micros(next - now));
                continue;
            }
            match self.slot(&endpoint.id) {
                Slot::Free => {}
                Slot::Busy | Slot::Full => continue,
                Slot::Stopping => return Ok(IDLE),
            }
            let cursor = endpoint.cursor_position();
            let waiting = match followed.get(&cursor) {
                Some(waiting) => *waiting,
                None => {
                    let page = engine.read_log(&scope, cursor, 1)?;
                    if page.held_back {
                        sleep = sleep.min(HELD_BACK);
                    }
                    let waiting = page.reset || !page.rows.is_empty();
                    followed.insert(cursor, waiting);
                    waiting
                }
            };
            if waiting && self.take_lease(engine, &endpoint.id)? {
                self.spawn(engine, endpoint.id)?;
            }
        }
        Ok(sleep)
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, Tasks> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// PROD-4: whether the endpoint may get a thread now; a busy one is
    /// marked to be looked at again when its thread ends, and so is the
    /// round when enough are served at once.
    fn slot(&self, id: &str) -> Slot {
        let mut tasks = self.tasks();
        if self.is_stopping() {
            return Slot::Stopping;
        }
        if let Some(again) = tasks.running.get_mut(id) {
            *again = true;
            return Slot::Busy;
        }
        if tasks.running.len() >= WEBHOOK_ENDPOINTS_AT_ONCE {
            tasks.waiting = true;
            return Slot::Full;
        }
        Slot::Free
    }

    /// Starts the thread that delivers the endpoint, whose lease this
    /// worker holds. The thread holds the handle only while it reads or
    /// writes, never across a request.
    fn spawn(self: &Arc<Self>, engine: &Arc<Engine>, id: String) -> Result<()> {
        let mut tasks = self.tasks();
        // Checked under the lock a stop sets it under: a stop waits for
        // every thread started before it.
        if self.is_stopping() {
            return Ok(());
        }
        let worker = self.clone();
        let handle = Arc::downgrade(engine);
        let served = id.clone();
        let started = std::thread::Builder::new()
            .name("clarion-webhook".to_owned())
            .spawn(move || worker.serve(&handle, &served));
        let thread = match started {
            Ok(thread) => thread,
            Err(error) => {
                drop(tasks);
                let _ = self.release(engine, &id);
                return Err(Error::Internal(format!(
                    "could not start a webhook delivery thread: {error}"
                )));
            }
        };
        tasks.running.insert(id, false);
        tasks.threads.retain(|thread| !thread.is_finished());
        tasks.threads.push(thread);
        Ok(())
    }

    /// An endpoint's thread: delivers it as far as it goes, lets go of its
    /// lease, and asks for a round when one is wanted.
    fn serve(&self, engine: &Weak<Engine>, id: &str) {
        // A panic must not leave the endpoint marked as served forever.
        let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.deliver_held(engine, id)
        }))
        .unwrap_or_else(|_| Err(Error::Internal("a webhook delivery panicked".into())));
        let soon = match served {
            Ok(Served::Retry | Served::HeldBack) => true,
            Ok(Served::Done | Served::Cancelled) => false,
            Err(error) => {
                if !quiet(&error) && !self.is_stopping() {
                    tracing::warn!(endpoint = id, %error, "a webhook delivery stopped on an error; it runs again");
                }
                false
            }
        };
        // The lease goes before the endpoint is free here, or a round
        // could take it again and then lose it to this release. A stopped
        // worker writes nothing: its lease lapses, as a crashed one's.
        if !self.is_stopping() {
            if let Some(engine) = engine.upgrade() {
                if let Err(error) = self.release(&engine, id) {
                    if !quiet(&error) {
                        tracing::warn!(endpoint = id, %error, "a webhook lease was not let go; it lapses");
                    }
                }
            }
        }
        let wanted = {
            let mut tasks = self.tasks();
            let again = tasks.running.remove(id).unwrap_or(false);
            let waiting = std::mem::take(&mut tasks.waiting);
            self.ended.notify_all();
            again || waiting || soon
        };
        if wanted && !self.is_stopping() {
            self.nudge();
        }
    }

    /// Asks the round thread for a round now.
    fn nudge(&self) {
        let wake = {
            let mut tasks = self.tasks();
            if tasks.wake.is_none() {
                tasks.missed = true;
            }
            tasks.wake.clone()
        };
        if let Some(wake) = wake {
            wake();
        }
    }

    /// PROD-4: no attempt starts from now on, and every request in flight
    /// fails at once (its connection is shut down), to be taken as
    /// cancelled.
    fn cancel(&self) {
        {
            let _tasks = self.tasks();
            self.stopping.store(true, Ordering::SeqCst);
        }
        self.guarded.clone().shutdown();
        self.open.clone().shutdown();
    }

    /// Waits, at most `within`, for every endpoint's thread to end.
    fn wait_for_tasks(&self, within: Duration) {
        let tasks = self.tasks();
        let (mut tasks, _) = self
            .ended
            .wait_timeout_while(tasks, within, |tasks| !tasks.running.is_empty())
            .unwrap_or_else(|p| p.into_inner());
        let left = tasks.running.len();
        let threads = std::mem::take(&mut tasks.threads);
        drop(tasks);
        if left > 0 {
            tracing::info!(
                deliveries = left,
                "webhook deliveries still connecting were cancelled; they end by their timeout, delivering nothing"
            );
            return;
        }
        // Each has let go of its endpoint: it ends at once.
        let current = std::thread::current().id();
        for thread in threads {
            if thread.thread().id() != current {
                let _ = thread.join();
            }
        }
    }

    /// HOOK-2: the endpoint's lease, if no other worker holds one.
    fn take_lease(&self, engine: &Engine, id: &str) -> Result<bool> {
        let now = engine.now().as_micros();
        let until = now.saturating_add(as_micros(self.options.lease()));
        let taken = engine.write(|conn| {
            Ok(diesel::update(
                webhooks::table
                    .find(id)
                    .filter(webhooks::state.eq(WebhookState::Enabled.as_str()))
                    .filter(
                        webhooks::lease_until
                            .is_null()
                            .or(webhooks::lease_until.lt(now))
                            .or(webhooks::lease_owner.eq(&self.id)),
                    ),
            )
            .set((
                webhooks::lease_owner.eq(&self.id),
                webhooks::lease_until.eq(until),
            ))
            .execute(conn)?)
        })?;
        Ok(taken == 1)
    }

    /// Lets go of the endpoint's lease, if this worker still holds it.
    fn release(&self, engine: &Engine, id: &str) -> Result<()> {
        engine.write(|conn| {
            diesel::update(held_row(id, &self.id))
                .set((
                    webhooks::lease_owner.eq(None::<String>),
                    webhooks::lease_until.eq(None::<i64>),
                ))
                .execute(conn)?;
            Ok(())
        })
    }

    /// The endpoint read again under the lease (another worker may have
    /// moved its cursor since the round listed it), then delivered.
    fn deliver_held(&self, engine: &Weak<Engine>, id: &str) -> Result<Served> {
        let endpoint = live(engine)?.read(|conn| load(conn, id))?;
        self.deliver(engine, endpoint)
    }

    /// HOOK-2: delivers the endpoint's events from its cursor on, one at a
    /// time, until the log is read or an attempt fails.
    fn deliver(&self, engine: &Weak<Engine>, endpoint: Endpoint) -> Result<Served> {
        let scope = system_scope()?;
        let mut cursor = endpoint.cursor_position();
        // What the row holds: the cursor is written only when it moved.
        let mut stored = cursor;
        loop {
            let page = live(engine)?.read_log(&scope, cursor, PAGE)?;
            if page.reset {
                tracing::warn!(
                    endpoint = endpoint.id,
                    "events after the webhook's cursor are gone; it goes on from the head"
                );
            }
            for event in &page.rows {
                if !endpoint.matches(&event.event_type, &event.workspace_id) {
                    cursor = Some(event.position);
                    continue;
                }
                // The events passed over before it are done with. Every
                // write under the lease also extends it, so the lease
                // covers the post that follows (a lost lease stops here).
                if cursor != stored && !self.move_cursor(&*live(engine)?, &endpoint.id, cursor)? {
                    return Ok(Served::Done);
                }
                if self.is_stopping() {
                    return Ok(Served::Cancelled);
                }
                let now = live(engine)?.now().as_micros();
                // LINK-4: links only to an endpoint added with them.
                let links = match endpoint.links {
                    true => payload_links(&*live(engine)?, event)?,
                    false => None,
                };
                let body = event_body(event, links);
                let message = event_id(event);
                let agent = if endpoint.allow_private {
                    &self.open
                } else {
                    &self.guarded
                };
                let answer = post(
                    agent,
                    &endpoint.url,
                    &endpoint.signing_secrets(now),
                    &message,
                    &body,
                );
                // PROD-4: no answer because the worker stopped is not the
                // endpoint's failure: nothing is recorded, and the event
                // is delivered again, with the same id.
                if answer.is_err() && self.is_stopping() {
                    tracing::info!(
                        endpoint = endpoint.id,
                        webhook_id = message,
                        "webhook delivery cancelled: the worker is stopping; the event is \
                         delivered again, with the same webhook-id, by the next worker \
                         once this one's lease lapses"
                    );
                    return Ok(Served::Cancelled);
                }
                let engine = live(engine)?;
                match outcome(answer) {
                    Outcome::Delivered => {
                        if !self.delivered(&engine, &endpoint.id, event)? {
                            return Ok(Served::Done);
                        }
                        cursor = Some(event.position);
                        stored = cursor;
                    }
                    Outcome::Gone => {
                        self.gone(&engine, &endpoint.id)?;
                        return Ok(Served::Done);
                    }
                    Outcome::Failed(why) => {
                        self.failed(&engine, &endpoint.id, &why)?;
                        return Ok(Served::Retry);
                    }
                }
            }
            // The examined tail (and, after a reset, the head) is done with.
            let end = page.next.or(cursor);
            if end != stored && !self.move_cursor(&*live(engine)?, &endpoint.id, end)? {
                return Ok(Served::Done);
            }
            cursor = end;
            stored = end;
            if !page.full {
                return Ok(if page.held_back {
                    Served::HeldBack
                } else {
                    Served::Done
                });
            }
        }
    }

    /// The lease's end if it is extended now.
    fn lease_end(&self, engine: &Engine) -> i64 {
        engine
            .now()
            .as_micros()
            .saturating_add(as_micros(self.options.lease()))
    }

    /// Moves the cursor forward to `to` (never back) and extends the
    /// lease; false when the lease was lost.
    fn move_cursor(&self, engine: &Engine, id: &str, to: Option<Position>) -> Result<bool> {
        let Some(to) = to else {
            return Ok(true);
        };
        let until = self.lease_end(engine);
        engine.write(|conn| {
            let current: Option<String> = held_row(id, &self.id)
                .select(webhooks::cursor)
                .first(conn)
                .optional()?;
            let Some(current) = current else {
                return Ok(false);
            };
            let at = Position::parse(&current).ok().flatten().unwrap_or_default();
            diesel::update(held_row(id, &self.id))
                .set((
                    webhooks::cursor.eq(to.max(at).to_string()),
                    webhooks::lease_until.eq(until),
                ))
                .execute(conn)?;
            Ok(true)
        })
    }

    /// HOOK-2: a 2xx: the cursor passes the event, the failure is over,
    /// the lease is extended; false when the lease was lost.
    fn delivered(&self, engine: &Engine, id: &str, event: &Logged) -> Result<bool> {
        let now = engine.now().as_micros();
        let until = self.lease_end(engine);
        engine.write(|conn| {
            let held = diesel::update(held_row(id, &self.id))
                .set((
                    webhooks::lease_until.eq(until),
                    webhooks::cursor.eq(event.position.to_string()),
                    webhooks::delivered.eq(webhooks::delivered + 1),
                    webhooks::failures.eq(0),
                    webhooks::failing_since.eq(None::<i64>),
                    webhooks::last_error.eq(""),
                    webhooks::last_attempt_at.eq(Some(now)),
                    webhooks::next_attempt_at.eq(None::<i64>),
                ))
                .execute(conn)?;
            Ok(held == 1)
        })
    }

    /// HOOK-2: `410 Gone` disables the endpoint.
    fn gone(&self, engine: &Engine, id: &str) -> Result<()> {
        let now = engine.now().as_micros();
        engine.write(|conn| {
            diesel::update(held_row(id, &self.id))
                .set((
                    webhooks::state.eq(WebhookState::Disabled.as_str()),
                    webhooks::failed.eq(webhooks::failed + 1),
                    webhooks::last_error.eq("answered 410 Gone: disabled"),
                    webhooks::last_attempt_at.eq(Some(now)),
                    webhooks::next_attempt_at.eq(None::<i64>),
                ))
                .execute(conn)?;
            Ok(())
        })
    }

    /// HOOK-2: a failure: tried again after the first retry delay, each
    /// later delay twice the previous (at most an hour); once the event
    /// has been failing for the give-up time, the endpoint is `failing`.
    fn failed(&self, engine: &Engine, id: &str, why: &str) -> Result<()> {
        let now = engine.now().as_micros();
        let options = self.options;
        engine.write(|conn| {
            let row: Option<(i32, Option<i64>)> = held_row(id, &self.id)
                .select((webhooks::failures, webhooks::failing_since))
                .first(conn)
                .optional()?;
            let Some((failures, since)) = row else {
                return Ok(());
            };
            let failures = failures.saturating_add(1);
            let since = since.unwrap_or(now);
            let delay = webhook_retry_delay(options.first_retry, failures.max(0) as u32);
            let gave_up = now.saturating_sub(since) >= as_micros(options.give_up);
            let state = if gave_up {
                WebhookState::Failing
            } else {
                WebhookState::Enabled
            };
            diesel::update(webhooks::table.find(id))
                .set((
                    webhooks::state.eq(state.as_str()),
                    webhooks::failures.eq(failures),
                    webhooks::failing_since.eq(Some(since)),
                    webhooks::failed.eq(webhooks::failed + 1),
                    webhooks::last_error.eq(why),
                    webhooks::last_attempt_at.eq(Some(now)),
                    webhooks::next_attempt_at
                        .eq((!gave_up).then(|| now.saturating_add(as_micros(delay)))),
                ))
                .execute(conn)?;
            Ok(())
        })
    }
}

/// PROD-4: stops a worker's deliveries: [`Stopper::stop`] cancels them
/// and waits (a second at most) for their threads to end; dropped (the
/// handle gone without a close), it cancels them.
pub(crate) struct Stopper(Arc<Worker>);

impl Stopper {
    pub(crate) fn new(worker: Arc<Worker>) -> Stopper {
        Stopper(worker)
    }

    pub(crate) fn stop(&self) {
        self.0.cancel();
        self.0.wait_for_tasks(STOP_WAIT);
    }
}

impl Drop for Stopper {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// LINK-4: the `links` of `event`'s payload for an endpoint added with
/// `links`: for `bundle.asked` and `bundle.reminded` one per person the
/// bundle reaches now (PPL-8), for `bundle.escalated` its `to` only; each
/// derived from (the event's position, the person), so a resend carries
/// the same link. `None` for the other event types.
fn payload_links(engine: &Engine, event: &Logged) -> Result<Option<Value>> {
    let only: Option<Vec<String>> = match EventType::from_word(&event.event_type) {
        Some(EventType::Asked | EventType::Reminded) => None,
        Some(EventType::Escalated) => Some(
            event.data_value()["to"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|user| user.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => return Ok(None),
    };
    let recipients = engine.recipients(&event.pending_id, only.as_deref())?;
    let stored = match recipients.is_empty() {
        true => None,
        false => engine.read(|conn| load_stored(conn, &event.pending_id))?,
    };
    let Some((bundle, _)) = stored else {
        return Ok(Some(Value::Array(Vec::new())));
    };
    let position = event.position.to_string();
    let links = recipients
        .into_iter()
        .map(|recipient| {
            let link = engine.derived_link(&bundle, &position, event.at, &recipient.user_id)?;
            Ok(serde_json::json!({
                "user_id": recipient.user_id,
                "url": link.url,
                "expires_at": link.expires_at,
            }))
        })
        .collect::<Result<Vec<Value>>>()?;
    Ok(Some(Value::Array(links)))
}

/// The handle, while it is open anywhere.
fn live(engine: &Weak<Engine>) -> Result<Arc<Engine>> {
    engine.upgrade().ok_or(Error::HandleClosed)
}

/// Errors that are no webhook's failure: an outage (PROD-2: the pool logs
/// it once) and a closed handle (a stop).
fn quiet(error: &Error) -> bool {
    error.is_outage() || matches!(error, Error::HandleClosed)
}

/// The worker reads the log as `system` (HOOK-2).
fn system_scope() -> Result<Scope> {
    Scope::of(&Principal::System).ok_or_else(|| Error::Internal("no scope for system".into()))
}

/// The endpoint's row while `worker` holds its lease: a worker that lost
/// the lease reads and moves nothing.
#[diesel::dsl::auto_type]
fn held_row<'a>(id: &'a str, worker: &'a str) -> _ {
    webhooks::table
        .find(id)
        .filter(webhooks::lease_owner.eq(worker))
}

fn as_micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

fn micros(micros: i64) -> Duration {
    Duration::from_micros(micros.max(0) as u64)
}
