//! The event log (EVT-1..3): one durable, ordered sequence of
//! `bundle.asked`, `bundle.resolved` and `bundle.closed`, appended inside
//! the transaction that makes each change (through [`Changes`], so only
//! the one change path appends), read back with `events_after` filtered by
//! what the reader may see now.
//!
//! Positions (EVT-1a) are the pair (writing transaction id, sequence
//! number). SQLite serializes writers, so its transaction id is always 0
//! and the autoincrement sequence alone orders events. PostgreSQL takes
//! identity values before commit, so a reader only reads events of
//! transactions below `pg_snapshot_xmin(pg_current_snapshot())` — every
//! transaction that could still commit an event has a larger id — and
//! writers share no lock.

use crate::domain::engine::signal::{EventSubscription, Wake};

use std::fmt;

use diesel::dsl::max;
use diesel::expression::IntoSql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use serde_json::{json, Value};

use crate::domain::change::Changes;
use crate::domain::engine::Engine;
use crate::domain::views::{BundleView, Response};
use crate::error::{Result, ValidationError};
use crate::rules::capability::Admitted;
use crate::rules::limits::event_page_size;
use crate::rules::visibility::{event_subject, event_visible, Scope};
use crate::rules::vocabulary::{BundleStatus, CloseReason, EventType};
use crate::store::schema::{bundles, event_horizon, events};
use crate::store::{AnyConnection, Timestamp};

/// Where an event stands in the log (EVT-1a): ordered by the writing
/// transaction, then by the sequence number. Shown as an opaque string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    txid: i64,
    seq: i64,
}

impl Position {
    /// `""` is the start of the log; SQLite's positions are the sequence
    /// number alone (`"42"`), PostgreSQL's `"<txid>-<seq>"`.
    pub(crate) fn parse(text: &str) -> Result<Option<Position>, ValidationError> {
        if text.is_empty() {
            return Ok(None);
        }
        let number = |part: &str| part.parse::<i64>().ok().filter(|n| *n >= 0);
        let parsed = match text.split_once('-') {
            None => number(text).map(|seq| Position { txid: 0, seq }),
            Some((txid, seq)) => number(txid)
                .zip(number(seq))
                .map(|(txid, seq)| Position { txid, seq }),
        };
        parsed.map(Some).ok_or_else(|| {
            ValidationError::new("after", format!("not an event position: {text:?}"))
        })
    }
}

/// Whether `text` is a position's text (HTTP-16 judges `Last-Event-ID`
/// with it before a stream starts).
#[cfg(feature = "http")]
pub(crate) fn is_position(text: &str) -> bool {
    matches!(Position::parse(text), Ok(Some(_)))
}

#[cfg(feature = "http")]
impl Position {
    /// The position `text` names (`""`: the start of the log), to order
    /// the positions of many streams (HTTP-14).
    pub(crate) fn of(text: &str) -> Option<Position> {
        Position::parse(text).ok().map(Option::unwrap_or_default)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.txid == 0 {
            write!(f, "{}", self.seq)
        } else {
            write!(f, "{}-{}", self.txid, self.seq)
        }
    }
}

/// One event as a reader sees it (EVT-2).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Event {
    /// Its position: pass it as `after` to read what follows.
    pub position: String,
    /// `bundle.asked`, `bundle.resolved`, `bundle.closed`,
    /// `workspace.members`, `bundle.voted`, `bundle.reminded` or
    /// `bundle.escalated`.
    #[serde(rename = "type")]
    pub event_type: String,
    /// When it was appended.
    pub at: Timestamp,
    /// The bundle it is about; `""` for `workspace.members`.
    pub pending_id: String,
    /// The bundle's task (AUTH-4) when it was appended; empty if none.
    pub task_id: String,
    /// Frozen at append: the bundle as the inbox lists it (`bundle.asked`,
    /// LIST-6), `{"status",
    /// "response"}` (`bundle.resolved`), `{"reason"}` (`bundle.closed`),
    /// `{"members"}` (`workspace.members`, PPL-2), `{"user_id",
    /// "rejected", "votes"}` (`bundle.voted`), `{"n", "next_at"}`
    /// (`bundle.reminded`) or `{"to"}` (`bundle.escalated`).
    pub data: Value,
}

/// A page of the event log (EVT-2).
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// The events after `after` the reader may see, oldest first.
    pub events: Vec<Event>,
    /// The position of the last event examined, visible or not (or `after`
    /// itself when none was): the next call's `after`.
    pub next: String,
    /// True when events after `after` were pruned (EVT-3), or `after` is a
    /// position this log never gave out (EVT-4: `next` is then the head):
    /// list again.
    pub reset: bool,
    /// PostgreSQL (EVT-1a): events exist that this read could not return
    /// yet, because a transaction that began before theirs is still open
    /// somewhere. Nothing will announce when it ends, so a live reader
    /// reads again shortly. Not part of the EVT-2 envelope.
    pub held_back: bool,
    /// The read examined as many events as it may (its `limit`): more may
    /// follow already, so a live reader reads on at once instead of
    /// waiting to be woken. Not part of the EVT-2 envelope.
    pub full: bool,
}

type EventRow = (
    i64,
    i64,
    String,
    i64,
    String,
    String,
    String,
    String,
    String,
    bool,
);

/// One event as the log holds it, with what it recorded of its bundle's
/// workspace and kind at append (EVT-1) and whether the reader may see
/// it: the one reader's rows, which `events_after` shows and the webhook
/// worker delivers (HOOK-2).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Logged {
    pub(crate) position: Position,
    pub(crate) event_type: String,
    pub(crate) at: Timestamp,
    pub(crate) pending_id: String,
    pub(crate) task_id: String,
    pub(crate) workspace_id: String,
    pub(crate) kind: String,
    /// The frozen `data`, as stored (JSON text).
    pub(crate) data: String,
    pub(crate) visible: bool,
}

impl Logged {
    /// The `data` as JSON (a malformed text shows as the string it is),
    /// in the current shape (DM-1: data frozen before a key was added
    /// reads with that key's empty value).
    pub(crate) fn data_value(&self) -> Value {
        let data =
            serde_json::from_str(&self.data).unwrap_or_else(|_| Value::String(self.data.clone()));
        current_shape(&self.event_type, data)
    }

    /// EVT-2's view of it.
    fn event(self) -> Event {
        Event {
            position: self.position.to_string(),
            data: self.data_value(),
            event_type: self.event_type,
            at: self.at,
            pending_id: self.pending_id,
            task_id: self.task_id,
        }
    }
}

/// DM-1, QUO-5, NUDGE-5: keys added to an event's `data` since it was
/// frozen, read as their empty value in their place — a `bundle.asked`
/// element's `quorum` (`null`, after `on_expire`) and `nudges` (`null`,
/// after `quorum`), a `bundle.resolved` response's `voters` (`[]`, after
/// `decided_by`).
fn current_shape(event_type: &str, mut data: Value) -> Value {
    // (after, key, its empty value is an array)
    let (object, added): (_, &[(&str, &str, bool)]) = if event_type == EventType::Asked.as_str() {
        (
            data.as_object_mut(),
            &[("on_expire", "quorum", false), ("quorum", "nudges", false)],
        )
    } else if event_type == EventType::Resolved.as_str() {
        let response = data.get_mut("response").and_then(Value::as_object_mut);
        (response, &[("decided_by", "voters", true)])
    } else {
        return data;
    };
    let Some(object) = object else {
        return data;
    };
    for (after, key, array) in added {
        if object.contains_key(*key) {
            continue;
        }
        let empty = if *array {
            Value::Array(Vec::new())
        } else {
            Value::Null
        };
        let place = object
            .keys()
            .position(|name| name == after)
            .map_or(object.len(), |index| index + 1);
        object.shift_insert(place, (*key).to_owned(), empty);
    }
    data
}

/// One read of the log: the events examined and where the next read goes
/// on (EVT-2..4).
pub(crate) struct LogPage {
    pub(crate) rows: Vec<Logged>,
    pub(crate) next: Option<Position>,
    pub(crate) reset: bool,
    pub(crate) held_back: bool,
    pub(crate) full: bool,
}

/// EVT-2: a `bundle.resolved` event's `data`.
#[derive(serde::Serialize)]
struct ResolvedData<'a> {
    status: BundleStatus,
    response: &'a Response,
}

/// EVT-1: the `data` of `bundle.resolved`, frozen: the status and the
/// response every caller of the claim is answered with.
pub(crate) fn resolved_data(status: BundleStatus, response: &Response) -> Result<String> {
    frozen(&ResolvedData { status, response })
}

/// QUO-7: a `bundle.voted` event's `data`: who voted, whether it was a
/// rejection, and how many votes the bundle holds with it.
pub(crate) fn voted_data(user_id: &str, rejected: bool, votes: usize) -> String {
    json!({"user_id": user_id, "rejected": rejected, "votes": votes}).to_string()
}

/// An event's `data` as the text it is stored as, frozen at append.
fn frozen(data: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string(data)
        .map_err(|error| crate::error::Error::Internal(format!("an event's data: {error}")))
}

impl Changes {
    /// EVT-1: `bundle.asked` for a bundle this transaction created; its
    /// `data` is the LIST-6 element as asked.
    pub(crate) fn append_asked(
        &mut self,
        conn: &mut AnyConnection,
        view: &BundleView,
        at: Timestamp,
    ) -> Result<()> {
        let data = frozen(view)?;
        self.appended_events = true;
        append(
            conn,
            EventType::Asked,
            at,
            &[view.pending_id.as_str()],
            &data,
        )
    }

    /// EVT-1: `bundle.resolved` for the claim's winner (answered, rejected
    /// or cancelled), with the committed resolution.
    pub(crate) fn append_resolved(
        &mut self,
        conn: &mut AnyConnection,
        status: BundleStatus,
        response: &Response,
        at: Timestamp,
    ) -> Result<()> {
        let data = resolved_data(status, response)?;
        self.appended_events = true;
        append(
            conn,
            EventType::Resolved,
            at,
            &[response.pending_id.as_str()],
            &data,
        )
    }

    /// QUO-7: `bundle.voted` for a vote this transaction recorded (its
    /// data: [`voted_data`]).
    pub(crate) fn append_voted(
        &mut self,
        conn: &mut AnyConnection,
        pending_id: &str,
        data: &str,
        at: Timestamp,
    ) -> Result<()> {
        self.appended_events = true;
        append(conn, EventType::Voted, at, &[pending_id], data)
    }

    /// NUDGE-2: `bundle.reminded` or `bundle.escalated` for a step this
    /// transaction took.
    pub(crate) fn append_step(
        &mut self,
        conn: &mut AnyConnection,
        kind: EventType,
        pending_id: &str,
        data: &str,
        at: Timestamp,
    ) -> Result<()> {
        self.appended_events = true;
        append(conn, kind, at, &[pending_id], data)
    }

    /// EVT-1: an event was appended by a statement of its own making
    /// (PostgreSQL, [`rows_of_type`]: a claim's `bundle.resolved` or a
    /// vote's `bundle.voted`), in this transaction.
    #[cfg(feature = "postgres")]
    pub(crate) fn appended_by_statement(&mut self) {
        self.appended_events = true;
    }

    /// EVT-1: `bundle.closed` for bundles that are active at this moment
    /// and stop being so by this transaction; appended before the change
    /// (a deletion would leave nothing to read the event's subject from).
    pub(crate) fn append_closed(
        &mut self,
        conn: &mut AnyConnection,
        active: &[String],
        reason: CloseReason,
        at: Timestamp,
    ) -> Result<()> {
        if active.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = active.iter().map(String::as_str).collect();
        let data = json!({"reason": reason.as_str()}).to_string();
        self.appended_events = true;
        // Bounded so SQLite's limit on bound values is never reached.
        for chunk in ids.chunks(10_000) {
            append(conn, EventType::Closed, at, chunk, &data)?;
        }
        Ok(())
    }
}

impl Changes {
    /// PPL-2: `workspace.members` for a member set this transaction
    /// replaced. It is about a workspace, not a bundle: no `pending_id` or
    /// task, and the recorded `workspace_id` is the one whose owner (and,
    /// once visibility knows them, members) read it, as for a bundle of
    /// that workspace.
    pub(crate) fn append_members(
        &mut self,
        conn: &mut AnyConnection,
        workspace_id: &str,
        members: &[&str],
        at: Timestamp,
    ) -> Result<()> {
        let data = json!({"members": members}).to_string();
        self.appended_events = true;
        diesel::insert_into(events::table)
            .values((
                events::event_type.eq(EventType::Members.as_str()),
                events::at.eq(at.as_micros()),
                events::pending_id.eq(""),
                events::task_id.eq(""),
                events::workspace_id.eq(workspace_id),
                events::task_exists.eq(true),
                events::kind.eq(""),
                events::data.eq(&data),
            ))
            .execute(conn)?;
        Ok(())
    }
}

/// One event per bundle in `pending_ids`, its subject (task, workspace,
/// kind) read from the bundle's row in this transaction.
fn append(
    conn: &mut AnyConnection,
    event_type: EventType,
    at: Timestamp,
    pending_ids: &[&str],
    data: &str,
) -> Result<()> {
    let rows = event_rows_query(event_type.as_str(), at.as_micros(), pending_ids, data);
    diesel::insert_into(events::table)
        .values(rows)
        .into_columns(event_columns())
        .execute(conn)?;
    Ok(())
}

/// The columns [`event_rows_query`] fills, in its order.
#[diesel::dsl::auto_type]
pub(crate) fn event_columns() -> _ {
    (
        events::event_type,
        events::at,
        (
            events::pending_id,
            events::task_id,
            events::workspace_id,
            events::task_exists,
            events::kind,
            events::human_only,
        ),
        events::data,
    )
}

/// EVT-1 on PostgreSQL: the rows of an event of `event_type` for the
/// bundles a statement of its own making writes, as [`event_rows_query`]
/// reads them, to be inserted in that statement: a claim's
/// `bundle.resolved` (the claim adds its own condition, a row was claimed)
/// or a vote's `bundle.voted`.
#[cfg(feature = "postgres")]
pub(crate) fn rows_of_type<'a>(
    event_type: EventType,
    pending_ids: &'a [&'a str],
    at: i64,
    data: &'a str,
) -> event_rows_query<'a> {
    event_rows_query(event_type.as_str(), at, pending_ids, data)
}

/// EVT-1: the rows of one event per bundle in `pending_ids`: the event's
/// type, time and data beside its subject, read from the bundle's row.
/// [`append`] inserts them in one statement.
#[diesel::dsl::auto_type]
pub fn event_rows_query<'a>(
    word: &'a str,
    at: i64,
    pending_ids: &'a [&'a str],
    data: &'a str,
) -> _ {
    bundles::table
        .filter(bundles::pending_id.eq_any(pending_ids))
        .select((
            word.into_sql::<Text>(),
            at.into_sql::<BigInt>(),
            event_subject(),
            data.into_sql::<Text>(),
        ))
}

/// EVT-2: up to `limit` events after `start` and below transaction
/// `below` (EVT-1a), in position order, each with whether `scope` may see
/// it now. Walks `events_by_position` from `start`.
#[diesel::dsl::auto_type]
pub fn events_page_query<'a>(
    scope: &'a Scope,
    start: Position,
    below: i64,
    limit: i64,
    now: i64,
) -> _ {
    let visible: event_visible<'a> = event_visible(scope, now);
    let (txid, seq): (i64, i64) = (start.txid, start.seq);
    events::table
        .filter(events::txid.ge(txid))
        .filter(events::txid.gt(txid).or(events::seq.gt(seq)))
        .filter(events::txid.lt(below))
        .order((events::txid, events::seq))
        .limit(limit)
        .select((
            events::txid,
            events::seq,
            events::event_type,
            events::at,
            events::pending_id,
            events::task_id,
            events::workspace_id,
            events::kind,
            events::data,
            visible,
        ))
}

/// EVT-1a: every event of a transaction with a smaller id than this has
/// committed or never will. SQLite's writers are serialized: no bound.
fn readable_below(conn: &mut AnyConnection) -> Result<i64> {
    Ok(match conn {
        AnyConnection::Sqlite(_) => i64::MAX,
        #[cfg(feature = "postgres")]
        AnyConnection::Postgres(conn) => diesel::select(diesel::dsl::sql::<BigInt>(
            "pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
        ))
        .get_result(conn)?,
    })
}

/// The newest event readable below transaction `below` (EVT-1a); `None`
/// for an empty log.
fn head(conn: &mut AnyConnection, below: i64) -> Result<Option<Position>> {
    let newest: Option<i64> = events::table
        .filter(events::txid.lt(below))
        .select(max(events::txid))
        .first(conn)?;
    let Some(txid) = newest else {
        return Ok(None);
    };
    let seq: Option<i64> = events::table
        .filter(events::txid.eq(txid))
        .select(max(events::seq))
        .first(conn)?;
    Ok(seq.map(|seq| Position { txid, seq }))
}

/// Where a read from `after` stands against the log's ends.
enum Standing {
    /// Within what the log has given out.
    Within,
    /// Below the prune horizon (EVT-3): events after it are gone.
    Pruned,
    /// Past both the newest readable event and the horizon (EVT-4): a
    /// position this log never gave out; the reader goes on from the head.
    PastHead(Option<Position>),
}

/// EVT-3, EVT-4: `after` against the horizon and, when the page found
/// nothing after it, against the head.
fn standing(
    conn: &mut AnyConnection,
    after: Option<Position>,
    found_any: bool,
    below: i64,
) -> Result<Standing> {
    let Some(after) = after else {
        return Ok(Standing::Within);
    };
    let pruned = horizon(conn)?;
    if after < pruned {
        return Ok(Standing::Pruned);
    }
    if found_any || after == pruned {
        return Ok(Standing::Within);
    }
    let head = head(conn, below)?;
    Ok(if head.is_some_and(|head| after <= head) {
        Standing::Within
    } else {
        Standing::PastHead(head)
    })
}

/// EVT-3: the highest position `prune` deleted.
fn horizon(conn: &mut AnyConnection) -> Result<Position> {
    let (txid, seq) = event_horizon::table
        .select((event_horizon::pruned_txid, event_horizon::pruned_seq))
        .first::<(i64, i64)>(conn)
        .optional()?
        .unwrap_or_default();
    Ok(Position { txid, seq })
}

impl Engine {
    /// EVT-2: up to `limit` events after `after` examined, the visible ones
    /// returned. The work is bounded by `limit`, not by the log's size.
    pub(crate) fn events_after(
        &self,
        caller: &Admitted<'_>,
        after: &str,
        limit: Option<i64>,
    ) -> Result<EventPage> {
        let scope = caller.scope()?;
        let after = Position::parse(after)?;
        let page = self.read_log(scope, after, event_page_size(limit))?;
        Ok(EventPage {
            events: page
                .rows
                .into_iter()
                .filter(|row| row.visible)
                .map(Logged::event)
                .collect(),
            next: page.next.map(|next| next.to_string()).unwrap_or_default(),
            reset: page.reset,
            held_back: page.held_back,
            full: page.full,
        })
    }

    /// EVT-2..4, the one reader of the log: up to `limit` events after
    /// `after` in position order (EVT-1a), each marked visible to `scope`
    /// or not, and where the next read goes on.
    pub(crate) fn read_log(
        &self,
        scope: &Scope,
        after: Option<Position>,
        limit: i64,
    ) -> Result<LogPage> {
        let start = after.unwrap_or_default();
        self.event_signal.count_read();
        let now = self.now().as_micros();
        let (rows, standing, held_back) = self.read(|conn| {
            let below = readable_below(conn)?;
            let rows: Vec<EventRow> =
                events_page_query(scope, start, below, limit, now).load(conn)?;
            let held_back = (rows.len() as i64) < limit
                && below != i64::MAX
                && diesel::select(diesel::dsl::exists(
                    events::table.filter(events::txid.ge(below)),
                ))
                .get_result(conn)?;
            // Read after the events: a prune that commits in between makes
            // this a (harmless) reset, never a silent gap.
            let standing = standing(conn, after, !rows.is_empty(), below)?;
            Ok((rows, standing, held_back))
        })?;
        let full = rows.len() as i64 >= limit;
        let rows: Vec<Logged> = rows
            .into_iter()
            .map(
                |(
                    txid,
                    seq,
                    event_type,
                    at,
                    pending_id,
                    task_id,
                    workspace_id,
                    kind,
                    data,
                    visible,
                )| {
                    Logged {
                        position: Position { txid, seq },
                        event_type,
                        at: Timestamp::from_micros(at),
                        pending_id,
                        task_id,
                        workspace_id,
                        kind,
                        data,
                        visible,
                    }
                },
            )
            .collect();
        let next = match standing {
            // EVT-4: nothing of this log is after `after`; go on from the head.
            Standing::PastHead(head) => head,
            Standing::Within | Standing::Pruned => rows.last().map(|row| row.position).or(after),
        };
        Ok(LogPage {
            rows,
            next,
            reset: !matches!(standing, Standing::Within),
            held_back,
            full,
        })
    }

    /// HTTP-6: `wake` is called whenever events may have been appended;
    /// other processes' events reach this handle through its watcher,
    /// which runs while anyone subscribes.
    pub(crate) fn subscribe_events(&self, wake: Wake) -> EventSubscription {
        let subscription = EventSubscription::new(&self.event_signal, wake);
        self.watch.ensure_running();
        subscription
    }

    /// HTTP-6: the position of the newest readable event (`""` when the
    /// log is empty), where a stream with no `Last-Event-ID` starts.
    pub(crate) fn events_head(&self, _caller: &Admitted<'_>) -> Result<String> {
        Ok(self
            .head_position()?
            .map(|head| head.to_string())
            .unwrap_or_default())
    }

    /// The newest readable event's position (EVT-1a), if any.
    pub(crate) fn head_position(&self) -> Result<Option<Position>> {
        self.read(|conn| {
            let below = readable_below(conn)?;
            head(conn, below)
        })
    }

    /// EVT-3 (with REL-8, HOOK-5): deletes events appended before
    /// `cutoff`, none after `keep_after` (an enabled or failing webhook's
    /// cursor), and records the highest position deleted. Returns how
    /// many it deleted.
    pub(crate) fn prune_events(
        &self,
        cutoff: i64,
        keep_after: Option<Position>,
        batch: i64,
    ) -> Result<u64> {
        let keep = keep_after.unwrap_or(Position {
            txid: i64::MAX,
            seq: i64::MAX,
        });
        let mut pruned = 0;
        loop {
            let deleted = self.change(|conn, _| {
                let oldest: Vec<(i64, i64)> = events::table
                    .filter(events::at.lt(cutoff))
                    .filter(
                        events::txid
                            .lt(keep.txid)
                            .or(events::txid.eq(keep.txid).and(events::seq.le(keep.seq))),
                    )
                    .order((events::txid, events::seq))
                    .limit(batch)
                    .select((events::txid, events::seq))
                    .load(conn)?;
                let Some(&(txid, seq)) = oldest.iter().max() else {
                    return Ok(0);
                };
                let seqs: Vec<i64> = oldest.iter().map(|(_, seq)| *seq).collect();
                let deleted = diesel::delete(events::table.filter(events::seq.eq_any(&seqs)))
                    .execute(conn)?;
                let newer = Position { txid, seq };
                if newer > horizon(conn)? {
                    diesel::update(event_horizon::table)
                        .set((
                            event_horizon::pruned_txid.eq(newer.txid),
                            event_horizon::pruned_seq.eq(newer.seq),
                        ))
                        .execute(conn)?;
                }
                Ok(deleted)
            })?;
            pruned += deleted as u64;
            if deleted == 0 {
                return Ok(pruned);
            }
        }
    }
}

/// HOOK-6: the committed events of the log after `after`, counted: those
/// a reader holds back (EVT-1a) are still to be delivered.
pub(crate) fn count_after(conn: &mut AnyConnection, after: Option<Position>) -> Result<i64> {
    let start = after.unwrap_or_default();
    Ok(events::table
        .filter(events::txid.ge(start.txid))
        .filter(events::txid.gt(start.txid).or(events::seq.gt(start.seq)))
        .count()
        .get_result(conn)?)
}

/// HOOK-5: the highest position `prune` deleted (`None` before any).
pub(crate) fn pruned_through(conn: &mut AnyConnection) -> Result<Option<Position>> {
    let horizon = horizon(conn)?;
    Ok((horizon != Position::default()).then_some(horizon))
}

/// HOOK-1, HOOK-5: the newest position given out that a reader could
/// read now: the newest readable event's, or the prune horizon when prune
/// left nothing newer (`None` for a log that never held an event).
pub(crate) fn head_in(conn: &mut AnyConnection) -> Result<Option<Position>> {
    let below = readable_below(conn)?;
    let head = head(conn, below)?;
    let pruned = pruned_through(conn)?;
    Ok(head.max(pruned))
}
