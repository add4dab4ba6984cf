//! The bundle aggregate as read from durable rows: its questions in DM-4
//! order, its display form (LIST-6/7), its status (WIRE-3) and its stored
//! response (WIRE-2, REPLAY-2). Nothing here consults memory, so everything
//! works after a restart.

use diesel::prelude::*;
use serde_json::Value;

use crate::domain::engine::Engine;
use crate::domain::names;
use crate::domain::nudges::{self, StoredNudges};
use crate::domain::quorum;
use crate::domain::views::{
    Answer, BundleDetail, BundleView, OptionView, QuestionView, QuorumView, Response, Submission,
    TaskNames,
};
use crate::error::{Entity, Error, Result};
use crate::rules::activeness;
use crate::rules::capability::Admitted;
use crate::rules::limits::check_text;
use crate::rules::principal::Principal;
use crate::rules::visibility::{self, Scope};
use crate::rules::vocabulary::{
    BundleKind, BundleStatus, DecidedBy, ExpiryAction, QuestionStatus, Resolution,
};
use crate::store::schema::{bundle_questions, bundles};
use crate::store::{among, at_most_one, AnyConnection, Timestamp};

/// A bundle's row with what the rules derive from it.
#[derive(Debug, Clone, Queryable)]
pub(crate) struct BundleRecord {
    pub pending_id: String,
    pub session_id: String,
    pub kind: String,
    pub context: String,
    pub created_at: i64,
    pub reject_reason: String,
    pub responded_at: Option<i64>,
    /// AUTH-4: own task id, else the session's; `None` unless that task exists.
    pub task_id: Option<String>,
    /// WIRE-2: the stored resolver kind, once resolved.
    pub resolved_by_kind: Option<String>,
    /// WIRE-6: the stored resolver's audit id (`user`, `user/agent`, `""`).
    pub resolved_by_id: Option<String>,
    /// EXP-1: the deadline, if any.
    pub expires_at: Option<i64>,
    /// EXP-1: the deadline's action word (`""` without one).
    pub on_expire: String,
    /// EXP-5: the stored default (a [`Submission`]'s JSON text), for
    /// `answer` and `reject`.
    pub default_response: Option<String>,
    /// QUO-2: for people only (a quorum bundle).
    pub human_only: bool,
    /// QUO-1: the stored policy's columns (`None` approvals: no quorum).
    pub quorum_approvals: Option<i32>,
    pub quorum_rejections: Option<i32>,
    pub quorum_requested_by: Option<String>,
    /// QUO-4: the deciding votes' user ids, a JSON array (`[]` unless a
    /// quorum decided).
    pub voters: String,
    /// NUDGE-1, NUDGE-2: its reminders and escalation, and the steps taken.
    pub nudges: StoredNudges,
}

impl BundleRecord {
    /// Its quorum columns (QUO-1, QUO-2, QUO-4).
    pub(crate) fn quorum(&self) -> quorum::Stored<'_> {
        quorum::Stored {
            pending_id: &self.pending_id,
            human_only: self.human_only,
            approvals: self.quorum_approvals,
            rejections: self.quorum_rejections,
            requested_by: self.quorum_requested_by.as_deref(),
            voters: &self.voters,
        }
    }

    /// EXP-5: the stored default, if it has one that reads back.
    pub(crate) fn default_submission(&self) -> Option<Submission> {
        serde_json::from_str(self.default_response.as_deref()?).ok()
    }
}

/// What WIRE-3's status needs beyond the rows: ACT-1 and ACT-1.2. SQL NULL
/// (a session without turns) reads as false.
#[derive(Debug, Clone, Copy, Queryable)]
pub(crate) struct Standing {
    pub is_active: Option<bool>,
    /// EXP-2: live, its deadline passed, nothing settled it yet.
    pub is_due: Option<bool>,
    pub in_current_turn: Option<bool>,
    /// LIFE-5: the agent went away; a resolution goes to the outbox.
    pub agent_disconnected: bool,
}

/// One question row as stored.
#[derive(Debug, Clone, Queryable)]
pub(crate) struct QuestionRecord {
    pub id: i64,
    pub pending_id: String,
    pub question_id: String,
    pub question_index: Option<i32>,
    pub payload: String,
    pub status: Option<String>,
    pub response: Option<String>,
    pub created_at: i64,
}

impl QuestionRecord {
    /// DM-4: `question_index` (NULL as 0), then `created_at`, then row id.
    /// Every place that orders questions sorts by this key.
    pub fn dm4_key(&self) -> (i32, i64, i64) {
        (self.question_index.unwrap_or(0), self.created_at, self.id)
    }

    /// The row's status word read through the vocabulary.
    pub fn status(&self) -> QuestionStatus {
        QuestionStatus::from_stored(self.status.as_deref())
    }
}

/// Sorts question rows into DM-4 order.
pub(crate) fn sort_dm4(rows: &mut [QuestionRecord]) {
    rows.sort_by_key(QuestionRecord::dm4_key);
}

fn text_at(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// LIST-7/9: a payload that does not parse shows empty strings and no
/// options; unknown or mistyped fields show as empty, never as null.
fn question_view(row: &QuestionRecord) -> QuestionView {
    let payload: Value = serde_json::from_str(&row.payload).unwrap_or(Value::Null);
    let options = payload
        .get("options")
        .and_then(Value::as_array)
        .map(|options| {
            options
                .iter()
                .map(|option| OptionView {
                    option_id: text_at(option, "option_id"),
                    label: text_at(option, "label"),
                    description: text_at(option, "description"),
                })
                .collect()
        })
        .unwrap_or_default();
    QuestionView {
        question_id: row.question_id.clone(),
        title: text_at(&payload, "title"),
        prompt: text_at(&payload, "prompt"),
        status: row.status(),
        // ASK-6, DM-1: absent or not a boolean reads as several.
        multi_select: payload
            .get("multi_select")
            .and_then(Value::as_bool)
            .unwrap_or(true),
        options,
    }
}

/// What an answer to a stored question may select: its option ids in
/// their order (VAL-2, NORM-2) and whether several of them (VAL-9).
pub(crate) fn choices(row: &QuestionRecord) -> (Vec<String>, bool) {
    let view = question_view(row);
    let ids = view
        .options
        .into_iter()
        .map(|option| option.option_id)
        .collect();
    (ids, view.multi_select)
}

/// LIST-6: the display form of a bundle, its DM-4-ordered rows, its
/// task's names (LIST-11) and its quorum with its votes (QUO-5, read by
/// `quorum::shown`).
pub(crate) fn bundle_view(
    record: &BundleRecord,
    rows: &[QuestionRecord],
    names: TaskNames,
    quorum: Option<QuorumView>,
    now: Timestamp,
) -> BundleView {
    let created_at = Timestamp::from_micros(record.created_at);
    BundleView {
        pending_id: record.pending_id.clone(),
        task_id: record.task_id.clone().unwrap_or_default(),
        task_title: names.task_title,
        workspace_id: names.workspace_id,
        workspace_name: names.workspace_name,
        session_id: record.session_id.clone(),
        kind: BundleKind::from_stored(&record.kind),
        created_at,
        age_seconds: created_at.whole_seconds_until(now),
        expires_at: record.expires_at.map(Timestamp::from_micros),
        on_expire: ExpiryAction::from_stored(&record.on_expire),
        quorum,
        nudges: record
            .nudges
            .view(record.created_at, record.expires_at, now),
        context: record.context.clone(),
        questions: rows.iter().map(question_view).collect(),
    }
}

/// REPLAY-2: the winner's resolution reconstructed from DM-4-ordered rows,
/// or `None` if no row carries a resolution status.
pub(crate) fn stored_response(
    record: &BundleRecord,
    rows: &[QuestionRecord],
) -> Option<(BundleStatus, Response)> {
    let status = BundleStatus::from(rows.iter().find_map(|row| row.status().resolution())?);
    let answers = rows
        .iter()
        .filter_map(|row| row.response.as_deref())
        .filter_map(|text| serde_json::from_str::<Answer>(text).ok())
        .collect();
    Some((
        status,
        Response {
            pending_id: record.pending_id.clone(),
            answers,
            rejected: status == BundleStatus::Rejected,
            reject_reason: record.reject_reason.clone(),
            responded_at: record.responded_at.map(Timestamp::from_micros),
            decided_by: DecidedBy::from_stored(record.resolved_by_kind.as_deref()),
            voters: record.quorum().voters(),
        },
    ))
}

/// EXP-2, EXP-3: a bundle as the deadline's settlement writes it — its
/// pending rows `expired` (no response), or taking the stored default
/// (`answered` with one stored answer per row, or `rejected`), and for a
/// resolution the bundle's marks: the reason, `responded_at` the
/// deadline, resolver `deadline`. Rows already terminal keep theirs.
/// `get_bundle` shows a due bundle through this, and the settlement
/// writes what this returns, so both are the same bytes whoever settles
/// it, and whenever. `None` for a bundle without a deadline.
pub(crate) fn settled_by_deadline(
    record: &BundleRecord,
    rows: &[QuestionRecord],
) -> Option<(BundleRecord, Vec<QuestionRecord>)> {
    let expires_at = record.expires_at?;
    let default = record.default_submission();
    let (status, reject_reason) = match (ExpiryAction::from_stored(&record.on_expire), &default) {
        (ExpiryAction::Answer, Some(_)) => (Resolution::Answered.as_str(), String::new()),
        (ExpiryAction::Reject, Some(default)) => {
            (Resolution::Rejected.as_str(), default.reject_reason.clone())
        }
        _ => (QuestionStatus::EXPIRED_WORD, String::new()),
    };
    let resolved = status != QuestionStatus::EXPIRED_WORD;
    let answers = default.map(|default| default.answers).unwrap_or_default();
    let rows = rows
        .iter()
        .map(|row| {
            let mut row = row.clone();
            if row.status() == QuestionStatus::Pending {
                row.status = Some(status.to_owned());
                row.response = (status == Resolution::Answered.as_str())
                    .then(|| stored_answer_of(&answers, &row.question_id));
            }
            row
        })
        .collect();
    let mut record = record.clone();
    if resolved {
        record.reject_reason = reject_reason;
        record.responded_at = Some(expires_at);
        record.resolved_by_kind = Some(DecidedBy::Deadline.as_str().to_owned());
        record.resolved_by_id = Some(String::new());
    }
    Some((record, rows))
}

/// REPLAY-2: the stored answer object of the row answering `question_id`
/// (every answered row stores one; none given is an empty "no answer").
pub(crate) fn stored_answer_of(answers: &[Answer], question_id: &str) -> String {
    let empty = Answer {
        question_id: question_id.to_owned(),
        selected_options: Vec::new(),
        custom_text: String::new(),
    };
    let answer = answers
        .iter()
        .find(|answer| answer.question_id == question_id)
        .unwrap_or(&empty);
    // An `Answer` is strings and lists of strings: it always serializes.
    serde_json::to_string(answer).unwrap_or_default()
}

/// EXP-2: a bundle as readers see it — a due one exactly as its
/// settlement will write it (reads never write), any other as stored.
pub(crate) fn as_read(
    record: BundleRecord,
    standing: Standing,
    rows: Vec<QuestionRecord>,
) -> (BundleRecord, Vec<QuestionRecord>) {
    if standing.is_due == Some(true) {
        if let Some(settled) = settled_by_deadline(&record, &rows) {
            return settled;
        }
    }
    (record, rows)
}

/// WIRE-3 status precedence: active → pending; else the resolution; else
/// expired; else superseded; else inactive. A due bundle is read through
/// [`as_read`] first.
pub(crate) fn status_of(
    record: &BundleRecord,
    standing: Standing,
    rows: &[QuestionRecord],
) -> (BundleStatus, Option<Response>) {
    if standing.is_active == Some(true) {
        return (BundleStatus::Pending, None);
    }
    if let Some((status, response)) = stored_response(record, rows) {
        return (status, Some(response));
    }
    if rows
        .iter()
        .any(|row| row.status() == QuestionStatus::Expired)
    {
        return (BundleStatus::Expired, None);
    }
    if standing.in_current_turn != Some(true) {
        return (BundleStatus::Superseded, None);
    }
    (BundleStatus::Inactive, None)
}

/// The columns of a `BundleRecord`, with the derived task and activeness.
#[diesel::dsl::auto_type]
pub fn bundle_record_columns() -> _ {
    (
        bundles::pending_id,
        bundles::session_id,
        bundles::kind,
        bundles::context,
        bundles::created_at,
        bundles::reject_reason,
        bundles::responded_at,
        visibility::resolved_task_id(),
        bundles::resolved_by_kind,
        bundles::resolved_by_id,
        bundles::expires_at,
        bundles::on_expire,
        bundles::default_response,
        bundles::human_only,
        bundles::quorum_approvals,
        bundles::quorum_rejections,
        bundles::quorum_requested_by,
        bundles::voters,
        nudges::nudge_columns(),
    )
}

/// WIRE-3: where one bundle stands at `now` (ACT-1, ACT-1.2).
#[diesel::dsl::auto_type]
pub fn standing_query<'a>(pending_id: &'a str, now: i64) -> _ {
    let active: activeness::is_active = activeness::is_active(now);
    // Only a bundle whose deadline passed evaluates the live subqueries
    // again: both engines stop at the deadline's column test.
    let due: activeness::is_due = activeness::is_due(now);
    bundles::table
        .filter(bundles::pending_id.eq(pending_id))
        .select((
            active,
            due,
            activeness::in_current_turn(),
            bundles::agent_disconnected,
        ))
}

/// One bundle, if the scope may see it.
#[diesel::dsl::auto_type]
pub fn visible_bundle_query<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let bundle: visibility::visible_bundle<'a> = visibility::visible_bundle(scope, pending_id, now);
    bundle.select(bundle_record_columns())
}

diesel::alias!(bundle_questions as detail_rows: DetailRows);

/// WIRE-3 in one statement: the bundle if the scope may see it, where it
/// stands (as [`standing_query`]), its names (LIST-11, by its task key:
/// NULL when that task does not exist, as AUTH-4 reads it) and its
/// question rows joined, one result row per question. One statement is one
/// snapshot on both backends, so `get_bundle` needs no read transaction:
/// on PostgreSQL one round trip instead of six (#41).
#[diesel::dsl::auto_type]
pub fn bundle_detail_query<'a>(scope: &'a Scope, pending_id: &'a str, now: i64) -> _ {
    let bundle: visibility::visible_bundle<'a> = visibility::visible_bundle(scope, pending_id, now);
    let active: activeness::is_active = activeness::is_active(now);
    let due: activeness::is_due = activeness::is_due(now);
    let names: names::names_of_task<bundles::task_key> = names::names_of_task(bundles::task_key);
    let rows_of_this_bundle: diesel::dsl::Eq<
        diesel::query_source::AliasedField<DetailRows, bundle_questions::pending_id>,
        bundles::pending_id,
    > = detail_rows
        .field(bundle_questions::pending_id)
        .eq(bundles::pending_id);
    let rows: diesel::dsl::Nullable<
        diesel::dsl::Fields<diesel::query_source::Alias<DetailRows>, question_record_columns>,
    > = detail_rows.fields(question_record_columns()).nullable();
    bundle
        .left_join(detail_rows.on(rows_of_this_bundle))
        .select((
            bundle_record_columns(),
            (
                active,
                due,
                activeness::in_current_turn(),
                bundles::agent_disconnected,
            ),
            names,
            rows,
        ))
}

/// What [`bundle_detail_query`] returns for each of the bundle's rows.
type DetailRow = (
    BundleRecord,
    Standing,
    (Option<String>, Option<String>, Option<String>),
    Option<QuestionRecord>,
);

/// A bundle as `get_bundle` reads it: its record, standing, rows in DM-4
/// order and names.
type Detail = (BundleRecord, Standing, Vec<QuestionRecord>, TaskNames);

/// One bundle the scope may see ([`bundle_detail_query`]); `None` when it
/// is invisible or absent (AUTH-5).
fn load_detail_at_once(
    conn: &mut AnyConnection,
    scope: &Scope,
    pending_id: &str,
    now: i64,
) -> Result<Option<Detail>> {
    let joined: Vec<DetailRow> = bundle_detail_query(scope, pending_id, now).load(conn)?;
    let mut joined = joined.into_iter();
    let Some((record, standing, names, first)) = joined.next() else {
        return Ok(None);
    };
    let mut rows: Vec<QuestionRecord> = first
        .into_iter()
        .chain(joined.filter_map(|(_, _, _, row)| row))
        .collect();
    sort_dm4(&mut rows);
    Ok(Some((record, standing, rows, names::task_names(names))))
}

/// Where an existing bundle stands.
fn load_standing(conn: &mut AnyConnection, pending_id: &str, now: i64) -> Result<Standing> {
    at_most_one(standing_query(pending_id, now), conn)?
        .ok_or_else(|| Error::Internal(format!("bundle {pending_id} vanished while being read")))
}

/// One bundle's record, standing and DM-4-ordered rows: any bundle for
/// the host side (`scope` is `None`; its callers were authorized before),
/// else only one the scope may see (AUTH-5: invisible and absent are the
/// same `None`).
pub(crate) fn load_detail(
    conn: &mut AnyConnection,
    scope: Option<&Scope>,
    pending_id: &str,
    now: i64,
) -> Result<Option<(BundleRecord, Standing, Vec<QuestionRecord>)>> {
    let record: Option<BundleRecord> = match scope {
        None => stored_record(conn, pending_id)?,
        Some(scope) => at_most_one(visible_bundle_query(scope, pending_id, now), conn)?,
    };
    let Some(record) = record else {
        return Ok(None);
    };
    let standing = load_standing(conn, pending_id, now)?;
    let rows = load_bundle_rows(conn, pending_id)?;
    Ok(Some((record, standing, rows)))
}

/// Any bundle's record and DM-4-ordered rows, for the host side (the
/// outbox), which asks nothing of its standing.
pub(crate) fn load_stored(
    conn: &mut AnyConnection,
    pending_id: &str,
) -> Result<Option<(BundleRecord, Vec<QuestionRecord>)>> {
    let Some(record) = stored_record(conn, pending_id)? else {
        return Ok(None);
    };
    let rows = load_bundle_rows(conn, pending_id)?;
    Ok(Some((record, rows)))
}

/// Any bundle's record, whoever may see it.
fn stored_record(conn: &mut AnyConnection, pending_id: &str) -> Result<Option<BundleRecord>> {
    Ok(at_most_one(
        bundles::table
            .find(pending_id)
            .select(bundle_record_columns()),
        conn,
    )?)
}

/// Loads one bundle the scope may see (AUTH-5: invisible and absent are the
/// same `None`), with its rows in DM-4 order.
pub(crate) fn load_visible(
    conn: &mut AnyConnection,
    scope: &Scope,
    pending_id: &str,
    now: i64,
) -> Result<Option<(BundleRecord, Vec<QuestionRecord>)>> {
    let record: Option<BundleRecord> =
        at_most_one(visible_bundle_query(scope, pending_id, now), conn)?;
    let Some(record) = record else {
        return Ok(None);
    };
    let rows = load_bundle_rows(conn, &record.pending_id)?;
    Ok(Some((record, rows)))
}

/// The question columns of a `QuestionRecord`.
#[diesel::dsl::auto_type]
pub(crate) fn question_record_columns() -> _ {
    (
        bundle_questions::id,
        bundle_questions::pending_id,
        bundle_questions::question_id,
        bundle_questions::question_index,
        bundle_questions::payload,
        bundle_questions::status,
        bundle_questions::response,
        bundle_questions::created_at,
    )
}

/// One bundle's question rows (in storage order; callers sort by DM-4).
#[diesel::dsl::auto_type]
pub(crate) fn rows_of_bundle_query<'a>(pending_id: &'a str) -> _ {
    bundle_questions::table
        .filter(bundle_questions::pending_id.eq(pending_id))
        .select(question_record_columns())
}

/// One bundle's question rows in DM-4 order.
pub(crate) fn load_bundle_rows(
    conn: &mut AnyConnection,
    pending_id: &str,
) -> Result<Vec<QuestionRecord>> {
    let mut rows: Vec<QuestionRecord> =
        per_backend!(conn, c => rows_of_bundle_query(pending_id).load(c))?;
    sort_dm4(&mut rows);
    Ok(rows)
}

/// The question rows of the given bundles, each bundle's rows in DM-4 order.
pub(crate) fn load_rows(
    conn: &mut AnyConnection,
    pending_ids: &[String],
) -> Result<Vec<QuestionRecord>> {
    let mut rows: Vec<QuestionRecord> = bundle_questions::table
        .filter(among(
            bundle_questions::pending_id,
            pending_ids.iter().map(String::as_str),
        ))
        .select(question_record_columns())
        .load(conn)?;
    sort_dm4(&mut rows);
    Ok(rows)
}

/// WIRE-3, WIRE-6: a bundle as `principal` reads it: the LIST-6 element
/// (a due one as its settlement will write it, EXP-2), its status and
/// response, its default and whether `principal` decided it. `get_bundle`
/// and every `list_settled` element come from here, so they are the same
/// bytes (LIST-13).
pub(crate) fn detail_of(
    record: BundleRecord,
    standing: Standing,
    rows: Vec<QuestionRecord>,
    names: TaskNames,
    quorum: Option<quorum::Shown>,
    now: Timestamp,
    principal: &Principal,
) -> BundleDetail {
    let (record, rows) = as_read(record, standing, rows);
    let (status, response) = status_of(&record, standing, &rows);
    // WIRE-6: a quorum's resolver is its voters.
    let decided_by_caller = response.is_some()
        && (principal.is_resolver(
            record.resolved_by_kind.as_deref(),
            record.resolved_by_id.as_deref(),
        ) || principal.voting_id().is_some_and(|user| {
            response
                .as_ref()
                .is_some_and(|r| r.voters.iter().any(|v| v == user))
        }));
    // QUO-3b: an active quorum bundle, a user who may vote and has not.
    let may_vote = status == BundleStatus::Pending
        && quorum.as_ref().is_some_and(|shown| {
            principal
                .voting_id()
                .is_some_and(|user| shown.policy.may_vote(user) && !shown.has_voted(user))
        });
    BundleDetail {
        bundle: bundle_view(&record, &rows, names, quorum.map(|shown| shown.view), now),
        status,
        response,
        default_response: record.default_submission(),
        decided_by_caller,
        may_vote,
    }
}

/// QUO-5: the quorum of one bundle read for showing, `None` without one.
pub(crate) fn shown_quorum(
    conn: &mut AnyConnection,
    record: &BundleRecord,
    active: bool,
    now: i64,
) -> Result<Option<quorum::Shown>> {
    Ok(quorum::shown(conn, &[(record.quorum(), active)], now)?.remove(&record.pending_id))
}

impl Engine {
    /// WIRE-3 `get_bundle`: the bundle, its status and its response, from
    /// durable state. Capability first, then visibility (AUTH-10); a bundle
    /// the principal may not see is `NotFound`, exactly like a missing one.
    pub(crate) fn get_bundle(
        &self,
        caller: &Admitted<'_>,
        pending_id: &str,
    ) -> Result<BundleDetail> {
        check_text("pending_id", pending_id)?;
        let scope = caller.scope()?;
        let now = self.now();
        let micros = now.as_micros();
        let (record, standing, rows, names, quorum) = self
            .read_one(|conn| {
                let Some((record, standing, rows, names)) =
                    load_detail_at_once(conn, scope, pending_id, micros)?
                else {
                    return Ok(None);
                };
                let active = standing.is_active == Some(true);
                let quorum = shown_quorum(conn, &record, active, micros)?;
                Ok(Some((record, standing, rows, names, quorum)))
            })?
            .ok_or(Error::NotFound(Entity::Bundle))?;
        Ok(detail_of(
            record,
            standing,
            rows,
            names,
            quorum,
            now,
            caller.principal(),
        ))
    }
}
