//! MAIL-1a: the mail worker. A round thread of the handle follows the
//! event log from the one cursor, as the webhook worker does (HOOK-2):
//! under a lease in the database (two processes never send one mail), in
//! the log's order, reading the log as `system` through the one reader.
//! For each `bundle.asked`, `bundle.reminded` and `bundle.escalated` it
//! reads the recipients then (PPL-8: nobody for a bundle no longer active
//! or a person who may no longer act) and sends each one mail with a
//! blocking SMTP client. Each recipient done (sent or dropped) is written
//! to the row before the next is tried, and the cursor passes the event
//! once all are, so a worker that died mid-event resends at most the mail
//! in flight, with the same `Message-ID` and link, and skips nobody.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::prelude::*;
use lettre::message::Mailbox;
use lettre::{SmtpTransport, Transport};

use crate::domain::engine::Engine;
use crate::domain::events::{self, Logged, Position};
use crate::domain::mail::message::{compose, Content, Occasion};
use crate::domain::mail::status::{message_id, ROW};
use crate::error::{Error, Result};
use crate::rules::capability::{admit, HOST};
use crate::rules::limits::{
    webhook_retry_delay, WEBHOOK_FIRST_RETRY, WEBHOOK_GIVE_UP, WEBHOOK_TIMEOUT,
};
use crate::rules::principal::Principal;
use crate::rules::visibility::Scope;
use crate::rules::vocabulary::Channel;
use crate::store::schema::mail_state;
use crate::store::{IdKind, IdSource, UuidV7Ids};

/// How mail is sent (MAIL-1, [`crate::Builder::mail`]): the SMTP server,
/// the sender, and HOOK-2's timing (short values let tests run in
/// seconds).
#[derive(Clone, PartialEq, Eq)]
pub struct MailOptions {
    /// `smtp://[user:password@]host[:port]` (plain; `?tls=required` or
    /// `?tls=opportunistic` for STARTTLS) or `smtps://…` (TLS from the
    /// start); user and password percent-decoded.
    pub smtp_url: String,
    /// The `From` address, such as `Clarion <inbox@example.com>`.
    pub from: String,
    /// How long one SMTP exchange may take (default 10 s).
    pub timeout: Duration,
    /// The delay before a transient failure's first retry (default 5 s);
    /// each later one doubles, up to an hour (HOOK-2).
    pub first_retry: Duration,
    /// How long one message may keep failing before it is dropped
    /// (default 3 days, HOOK-2's).
    pub give_up: Duration,
}

impl MailOptions {
    /// Mail through `smtp_url` from `from`, with the default timing.
    pub fn new(smtp_url: impl Into<String>, from: impl Into<String>) -> Self {
        MailOptions {
            smtp_url: smtp_url.into(),
            from: from.into(),
            timeout: WEBHOOK_TIMEOUT,
            first_retry: WEBHOOK_FIRST_RETRY,
            give_up: WEBHOOK_GIVE_UP,
        }
    }

    /// A worker's hold on the row: longer than one exchange, so it lapses
    /// only when the worker is gone.
    fn lease(&self) -> Duration {
        self.timeout * 2 + Duration::from_secs(1)
    }
}

/// Never the URL's password.
impl std::fmt::Debug for MailOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailOptions")
            .field("smtp_url", &redacted(&self.smtp_url))
            .field("from", &self.from)
            .field("timeout", &self.timeout)
            .field("first_retry", &self.first_retry)
            .field("give_up", &self.give_up)
            .finish()
    }
}

/// The URL without its credentials.
fn redacted(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// How long a round sleeps when nothing is due sooner.
const IDLE: Duration = Duration::from_secs(1);

/// How soon a round looks again while events are held back (EVT-1a).
const HELD_BACK: Duration = Duration::from_millis(50);

/// Events read per page of the log.
const PAGE: i64 = 100;

/// The worker a round thread of the handle runs.
pub(crate) struct Worker {
    /// This worker's name in the lease.
    id: String,
    transport: SmtpTransport,
    from: Mailbox,
    options: MailOptions,
    /// Set by a stop: no message is started any more.
    stopping: AtomicBool,
}

/// What a round's sending came to.
enum Served {
    /// The log was read to its end, or the lease was lost.
    Done,
    /// A message failed for now: tried again at `next_attempt_at`.
    Retry,
    /// Events are held back by a transaction open elsewhere.
    HeldBack,
    /// The worker is stopping.
    Stopped,
}

/// What one event's mail came to.
enum Sent {
    /// Every recipient is done.
    All,
    Retry,
    Stopped,
    /// The lease was lost: another worker goes on.
    Lost,
}

/// The row as a round starts.
struct State {
    cursor: String,
    done_at: String,
    done: Vec<String>,
    next_attempt_at: Option<i64>,
}

/// How one message ended.
enum Ended {
    Sent,
    Dropped(String),
}

impl Worker {
    /// MAIL-1: the transport and the sender, checked; why not, in words.
    pub(crate) fn new(options: &MailOptions) -> std::result::Result<Worker, String> {
        let lower = options.smtp_url.to_ascii_lowercase();
        if !(lower.starts_with("smtp://") || lower.starts_with("smtps://")) {
            return Err(format!(
                "the SMTP URL {:?} must start with smtp:// or smtps://",
                redacted(&options.smtp_url)
            ));
        }
        let transport = SmtpTransport::from_url(&options.smtp_url)
            .map_err(|error| {
                format!(
                    "the SMTP URL {:?} is not usable: {error}",
                    redacted(&options.smtp_url)
                )
            })?
            .timeout(Some(options.timeout))
            .build();
        let from: Mailbox = options.from.parse().map_err(|error| {
            format!(
                "the mail sender {:?} is not an address: {error}",
                options.from
            )
        })?;
        Ok(Worker {
            id: UuidV7Ids.new_id(IdKind::Webhook),
            transport,
            from,
            options: options.clone(),
            stopping: AtomicBool::new(false),
        })
    }

    /// No message starts from now on.
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// One round, a failure logged: how long to sleep before the next.
    pub(crate) fn round_or_idle(&self, engine: &Arc<Engine>) -> Duration {
        let sleep = self.round(engine).unwrap_or_else(|error| {
            if !quiet(&error) && !self.is_stopping() {
                tracing::warn!(%error, "a mail round failed; it runs again");
            }
            IDLE
        });
        // A stopped worker writes nothing: its lease lapses, as a crashed
        // one's.
        if !self.is_stopping() {
            if let Err(error) = self.release(engine) {
                if !quiet(&error) {
                    tracing::warn!(%error, "the mail lease was not let go; it lapses");
                }
            }
        }
        sleep
    }

    /// One round: the lease, then the log from the cursor as far as it
    /// goes; how long to sleep before the next.
    fn round(&self, engine: &Arc<Engine>) -> Result<Duration> {
        if self.is_stopping() || !self.take_lease(engine)? {
            return Ok(IDLE);
        }
        let now = engine.now().as_micros();
        let state = self.state(engine)?;
        if let Some(next) = state.next_attempt_at.filter(|next| *next > now) {
            return Ok(micros(next - now).min(IDLE));
        }
        Ok(match self.send_from(engine, state)? {
            Served::Done | Served::Stopped => IDLE,
            Served::HeldBack => HELD_BACK,
            Served::Retry => {
                let next = self.state(engine)?.next_attempt_at.unwrap_or(now);
                micros(next - engine.now().as_micros()).min(IDLE)
            }
        })
    }

    fn state(&self, engine: &Engine) -> Result<State> {
        let (cursor, done_at, done, next_attempt_at): (String, String, String, Option<i64>) =
            engine.read(|conn| {
                Ok(mail_state::table
                    .find(ROW)
                    .select((
                        mail_state::cursor,
                        mail_state::done_at,
                        mail_state::done,
                        mail_state::next_attempt_at,
                    ))
                    .first(conn)?)
            })?;
        Ok(State {
            cursor,
            done_at,
            done: serde_json::from_str(&done).unwrap_or_default(),
            next_attempt_at,
        })
    }

    /// MAIL-1a: the events from the cursor on, one at a time, until the
    /// log is read or a message is to be retried.
    fn send_from(&self, engine: &Engine, state: State) -> Result<Served> {
        let scope = system_scope()?;
        let mut cursor = Position::parse(&state.cursor).ok().flatten();
        let mut stored = cursor;
        let mut resumed = Some((state.done_at, state.done));
        loop {
            let page = engine.read_log(&scope, cursor, PAGE)?;
            if page.reset {
                tracing::warn!("events after the mail cursor are gone; mail goes on from the head");
            }
            for event in &page.rows {
                let Some(occasion) = Occasion::of(&event.event_type) else {
                    cursor = Some(event.position);
                    continue;
                };
                if cursor != stored && !self.move_cursor(engine, cursor)? {
                    return Ok(Served::Done);
                }
                let position = event.position.to_string();
                // Who was done with this event before a restart.
                let mut done = match resumed.take() {
                    Some((at, done)) if at == position => done,
                    _ => Vec::new(),
                };
                match self.send_event(engine, event, occasion, &mut done)? {
                    Sent::All => {}
                    Sent::Retry => return Ok(Served::Retry),
                    Sent::Stopped => return Ok(Served::Stopped),
                    Sent::Lost => return Ok(Served::Done),
                }
                cursor = Some(event.position);
                if !self.move_cursor(engine, cursor)? {
                    return Ok(Served::Done);
                }
                stored = cursor;
            }
            let end = page.next.or(cursor);
            if end != stored && !self.move_cursor(engine, end)? {
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

    /// MAIL-1: one mail to each recipient of the event not yet done,
    /// read now (PPL-8); people without an email are passed over.
    fn send_event(
        &self,
        engine: &Engine,
        event: &Logged,
        occasion: Occasion,
        done: &mut Vec<String>,
    ) -> Result<Sent> {
        // NUDGE-3: an escalation's mail goes to its `to` only.
        let only: Option<Vec<String>> = (occasion == Occasion::Escalated).then(|| {
            event
                .data_value()
                .get("to")
                .and_then(|to| to.as_array())
                .map(|to| {
                    to.iter()
                        .filter_map(|user| user.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        });
        let waiting: Vec<_> = engine
            .recipients(&event.pending_id, only.as_deref())?
            .into_iter()
            .filter(|person| !person.email.trim().is_empty() && !done.contains(&person.user_id))
            .collect();
        if waiting.is_empty() {
            return Ok(Sent::All);
        }
        let system = Principal::System;
        let detail =
            match engine.get_bundle(&admit(&system, HOST, Channel::Rust)?, &event.pending_id) {
                Ok(detail) => detail,
                Err(Error::NotFound(_)) => return Ok(Sent::All),
                Err(error) => return Err(error),
            };
        let Some((record, _)) =
            engine.read(|conn| crate::domain::bundle::load_stored(conn, &event.pending_id))?
        else {
            return Ok(Sent::All);
        };
        let position = event.position.to_string();
        for person in waiting {
            if self.is_stopping() {
                return Ok(Sent::Stopped);
            }
            let link = engine.derived_link(&record, &position, event.at, &person.user_id)?;
            let id = message_id(&position, &person.user_id);
            let content = Content {
                occasion,
                detail: &detail,
                name: &person.name,
                link: &link.url,
            };
            let ended = match compose(&content, &self.from, &person.email, &id) {
                Err(unaddressable) => Ended::Dropped(unaddressable.0),
                Ok(message) => match self.transport.send(&message) {
                    Ok(_) => Ended::Sent,
                    Err(error) if error.is_permanent() => {
                        Ended::Dropped(format!("refused: {error}"))
                    }
                    // PROD-4: no answer because the worker stopped is not a
                    // failure: nothing is recorded; it is sent again.
                    Err(_) if self.is_stopping() => return Ok(Sent::Stopped),
                    Err(error) => {
                        let why = error.to_string();
                        match self.failed(engine, &why)? {
                            None => return Ok(Sent::Lost),
                            Some(false) => {
                                tracing::info!(
                                    pending_id = event.pending_id,
                                    user_id = person.user_id,
                                    error = why,
                                    "a mail failed for now; it is tried again"
                                );
                                return Ok(Sent::Retry);
                            }
                            Some(true) => Ended::Dropped(format!("gave up: {why}")),
                        }
                    }
                },
            };
            if let Ended::Dropped(why) = &ended {
                tracing::warn!(
                    pending_id = event.pending_id,
                    user_id = person.user_id,
                    error = why.as_str(),
                    "a mail was dropped"
                );
            }
            done.push(person.user_id.clone());
            if !self.record(engine, &position, done, &ended)? {
                return Ok(Sent::Lost);
            }
        }
        Ok(Sent::All)
    }

    /// The lease's end if it is extended now.
    fn lease_end(&self, engine: &Engine) -> i64 {
        engine
            .now()
            .as_micros()
            .saturating_add(as_micros(self.options.lease()))
    }

    /// MAIL-1a: the row's lease, if no other worker holds one; the time a
    /// worker last ran is what `prune` judges by.
    fn take_lease(&self, engine: &Engine) -> Result<bool> {
        let now = engine.now().as_micros();
        let until = self.lease_end(engine);
        let taken = engine.write(|conn| {
            Ok(diesel::update(
                mail_state::table.find(ROW).filter(
                    mail_state::lease_until
                        .is_null()
                        .or(mail_state::lease_until.lt(now))
                        .or(mail_state::lease_owner.eq(&self.id)),
                ),
            )
            .set((
                mail_state::lease_owner.eq(&self.id),
                mail_state::lease_until.eq(until),
                mail_state::ran_at.eq(now),
                mail_state::give_up_us.eq(as_micros(self.options.give_up)),
            ))
            .execute(conn)?)
        })?;
        Ok(taken == 1)
    }

    fn release(&self, engine: &Engine) -> Result<()> {
        engine.write(|conn| {
            diesel::update(held_row(&self.id))
                .set((
                    mail_state::lease_owner.eq(None::<String>),
                    mail_state::lease_until.eq(None::<i64>),
                ))
                .execute(conn)?;
            Ok(())
        })
    }

    /// Moves the cursor forward to `to` (never back), forgetting the
    /// recipients done of the event it passed; false when the lease was
    /// lost.
    fn move_cursor(&self, engine: &Engine, to: Option<Position>) -> Result<bool> {
        let Some(to) = to else {
            return Ok(true);
        };
        let until = self.lease_end(engine);
        engine.write(|conn| {
            let current: Option<String> = held_row(&self.id)
                .select(mail_state::cursor)
                .first(conn)
                .optional()?;
            let Some(current) = current else {
                return Ok(false);
            };
            let at = Position::parse(&current).ok().flatten().unwrap_or_default();
            diesel::update(held_row(&self.id))
                .set((
                    mail_state::cursor.eq(to.max(at).to_string()),
                    mail_state::done_at.eq(""),
                    mail_state::done.eq("[]"),
                    mail_state::lease_until.eq(until),
                ))
                .execute(conn)?;
            Ok(true)
        })
    }

    /// MAIL-1a: one recipient of the event at `position` done — sent or
    /// dropped — counted; false when the lease was lost.
    fn record(
        &self,
        engine: &Engine,
        position: &str,
        done: &[String],
        ended: &Ended,
    ) -> Result<bool> {
        let until = self.lease_end(engine);
        let done = serde_json::to_string(done)
            .map_err(|error| Error::Internal(format!("mail progress: {error}")))?;
        engine.write(|conn| {
            let row = held_row(&self.id);
            let common = (
                mail_state::done_at.eq(position),
                mail_state::done.eq(&done),
                mail_state::failures.eq(0),
                mail_state::failing_since.eq(None::<i64>),
                mail_state::next_attempt_at.eq(None::<i64>),
                mail_state::lease_until.eq(until),
            );
            let held = match ended {
                Ended::Sent => diesel::update(row)
                    .set((common, mail_state::sent.eq(mail_state::sent + 1)))
                    .execute(conn)?,
                Ended::Dropped(why) => diesel::update(row)
                    .set((
                        common,
                        mail_state::failed.eq(mail_state::failed + 1),
                        mail_state::last_error.eq(why),
                    ))
                    .execute(conn)?,
            };
            Ok(held == 1)
        })
    }

    /// HOOK-2's delays for a transient failure: `Some(true)` once the
    /// message has failed for the give-up time (it is dropped), `None`
    /// when the lease was lost.
    fn failed(&self, engine: &Engine, why: &str) -> Result<Option<bool>> {
        let now = engine.now().as_micros();
        let until = self.lease_end(engine);
        let options = &self.options;
        engine.write(|conn| {
            let row: Option<(i32, Option<i64>)> = held_row(&self.id)
                .select((mail_state::failures, mail_state::failing_since))
                .first(conn)
                .optional()?;
            let Some((failures, since)) = row else {
                return Ok(None);
            };
            let failures = failures.saturating_add(1);
            let since = since.unwrap_or(now);
            if now.saturating_sub(since) >= as_micros(options.give_up) {
                return Ok(Some(true));
            }
            let delay = webhook_retry_delay(options.first_retry, failures.max(0) as u32);
            diesel::update(held_row(&self.id))
                .set((
                    mail_state::failures.eq(failures),
                    mail_state::failing_since.eq(Some(since)),
                    mail_state::last_error.eq(why),
                    mail_state::next_attempt_at.eq(Some(now.saturating_add(as_micros(delay)))),
                    mail_state::lease_until.eq(until),
                ))
                .execute(conn)?;
            Ok(Some(false))
        })
    }
}

impl Engine {
    /// MAIL-1a: the mail worker, woken when events are appended here or in
    /// another process. Its row is made the first time, its cursor at the
    /// head of the log. A handle runs one: starting it again leaves the
    /// first running.
    pub(crate) fn start_mail(
        self: &Arc<Self>,
        options: &MailOptions,
    ) -> std::result::Result<(), String> {
        use crate::domain::engine::rounds::EventRoundThread;
        if self.mail_worker.get().is_some() {
            return Ok(());
        }
        let worker = Arc::new(Worker::new(options)?);
        let now = self.now().as_micros();
        let give_up = as_micros(options.give_up);
        self.write(|conn| {
            let exists: bool = diesel::select(diesel::dsl::exists(mail_state::table.find(ROW)))
                .get_result(conn)?;
            if !exists {
                let head = events::head_in(conn)?
                    .map(|head| head.to_string())
                    .unwrap_or_default();
                diesel::insert_into(mail_state::table)
                    .values((
                        mail_state::id.eq(ROW),
                        mail_state::cursor.eq(head),
                        mail_state::ran_at.eq(now),
                        mail_state::give_up_us.eq(give_up),
                    ))
                    .execute(conn)?;
            }
            Ok(())
        })
        .map_err(|error| format!("could not start the mail worker: {error}"))?;
        let rounds = worker.clone();
        let round =
            crate::domain::open::while_open(self, move |engine| rounds.round_or_idle(engine));
        let thread = EventRoundThread::start(
            "clarion-mail",
            round,
            |wake| self.subscribe_events(wake),
            move || worker.stop(),
        )
        .map_err(|error| format!("could not start the mail worker: {error}"))?;
        if let Err(thread) = self.mail_worker.set(thread) {
            thread.stop();
        }
        Ok(())
    }
}

/// Errors that are no mail's failure: an outage (PROD-2: the pool logs
/// it once) and a closed handle (a stop).
fn quiet(error: &Error) -> bool {
    error.is_outage() || matches!(error, Error::HandleClosed)
}

/// The worker reads the log as `system`.
fn system_scope() -> Result<Scope> {
    Scope::of(&Principal::System).ok_or_else(|| Error::Internal("no scope for system".into()))
}

/// The row (id [`ROW`]) while `worker` holds its lease: a worker that
/// lost it moves nothing.
#[diesel::dsl::auto_type]
fn held_row<'a>(worker: &'a str) -> _ {
    mail_state::table
        .filter(mail_state::id.eq(1_i64))
        .filter(mail_state::lease_owner.eq(worker))
}

fn as_micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

fn micros(micros: i64) -> Duration {
    Duration::from_micros(micros.max(0) as u64)
}
