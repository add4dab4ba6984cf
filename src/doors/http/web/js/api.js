// @ts-check
// The API (UI-5): its base, the JSON it answers, and the one request
// function every call goes through; and the names of people (PPL-1a),
// asked in batches and kept for the page load. A refused sign-in is said
// through a hook inbox.js sets (onSignedOut), so this module, which every
// view uses, imports no view.

import { $ } from './dom.js';
import { state } from './state.js';

/**
 * Who is signed in (`GET /api/v1/session`).
 * @typedef {object} Principal
 * @property {string} kind `user`, `agent`, `system` or `unclassified`.
 * @property {string} [user_id]
 * @property {string} [agent_id]
 */

/**
 * `GET /api/v1/session`'s reply (UI-2).
 * @typedef {object} SessionReply
 * @property {Principal} principal
 * @property {string} via `session`, `bearer` or `open`.
 */

/**
 * One option of a question (LIST-6).
 * @typedef {object} Option
 * @property {string} option_id
 * @property {string} label
 * @property {string} description
 */

/**
 * One question of a bundle (LIST-6).
 * @typedef {object} Question
 * @property {string} question_id
 * @property {string} title
 * @property {string} prompt
 * @property {string} status
 * @property {boolean} multi_select false: at most one option (ASK-6).
 * @property {Option[]} options
 */

/**
 * One bundle element of the list (LIST-6), also an asked event's data.
 * @typedef {object} Bundle
 * @property {string} pending_id
 * @property {string} task_id
 * @property {string} task_title `""` when unknown (LIST-11).
 * @property {string} workspace_id as the task carries it.
 * @property {string} workspace_name `""` when unknown (LIST-11).
 * @property {string} session_id
 * @property {string} kind `question` or `permission`.
 * @property {string} created_at RFC 3339; these sort as text (LIST-3).
 * @property {number} age_seconds
 * @property {string} expires_at RFC 3339, or `""` without a deadline (EXP-5).
 * @property {'expire' | 'answer' | 'reject' | ''} on_expire
 * @property {Quorum | null} quorum QUO-5: `null` without a quorum.
 * @property {Nudges | null} [nudges] NUDGE-5: `null` without reminders or an escalation.
 * @property {string} context
 * @property {Question[]} questions
 */

/**
 * NUDGE-5: where a bundle's reminders and escalation stand.
 * @typedef {object} Nudges
 * @property {number} reminders_sent
 * @property {string} next_reminder_at RFC 3339, or `""` when none remains.
 * @property {string} escalated_at RFC 3339 once escalated, else `""`.
 */

/**
 * One recorded vote on a quorum bundle (QUO-5).
 * @typedef {object} Vote
 * @property {string} user_id
 * @property {string} at RFC 3339.
 * @property {boolean} rejected
 * @property {Answer[]} answers as WIRE-2's; empty for a rejection.
 * @property {string} reject_reason
 * @property {string} digest approvals count together only when equal.
 * @property {boolean} counts whether it counts now (once resolved: among
 *   the voters).
 */

/**
 * A quorum bundle's policy and votes (QUO-5).
 * @typedef {object} Quorum
 * @property {number} approvals identical approvals that decide.
 * @property {number} rejections rejections that decide.
 * @property {string[]} eligible `[]`: whoever sees the bundle.
 * @property {string} requested_by `""` for nobody.
 * @property {Vote[]} votes in vote order.
 */

/**
 * One answered question of a response (WIRE-2).
 * @typedef {object} Answer
 * @property {string} question_id
 * @property {string[]} selected_options
 * @property {string} custom_text
 */

/**
 * A bundle's response (WIRE-2).
 * @typedef {object} Response
 * @property {string} pending_id
 * @property {Answer[]} answers
 * @property {boolean} rejected
 * @property {string} reject_reason
 * @property {string} responded_at
 * @property {'user' | 'agent' | 'system' | 'deadline' | 'quorum' | ''} decided_by
 * @property {string[]} [voters] QUO-4: for `quorum`, the deciding voters.
 */

/**
 * A deadline's stored default (EXP-5).
 * @typedef {object} Submission
 * @property {Answer[]} answers
 * @property {boolean} rejected
 * @property {string} reject_reason
 */

/**
 * `GET /api/v1/clarification/{id}`: the element plus where it stands;
 * `may_vote` (QUO-3b): an active quorum bundle the caller may still vote on.
 * @typedef {Bundle & { status: string, response: Response | null, default_response: Submission | null,
 *   decided_by_caller: boolean, may_vote: boolean }} BundleDetail
 */

/**
 * One page of what was decided (LIST-13), newest first.
 * @typedef {object} SettledPage
 * @property {BundleDetail[]} bundles
 * @property {number} count
 * @property {string | null} next_cursor
 */

/**
 * One page of the inbox (LIST-5); `next_cursor` is `""` on the last.
 * @typedef {object} ListPage
 * @property {Bundle[]} bundles
 * @property {number} count
 * @property {string | null} next_cursor
 */

/**
 * `GET /api/v1/summary` (SUM-1).
 * @typedef {object} Summary
 * @property {number} pending_bundles
 * @property {number} pending_questions
 * @property {number} oldest_age_seconds
 */

/**
 * One entry of a bundle's attempt ledger (AUD-3, UI-12).
 * @typedef {object} Attempt
 * @property {string} at RFC 3339.
 * @property {string} principal_kind `user`, `agent`, `system` or `deadline`.
 * @property {string} user_id
 * @property {string} agent_id
 * @property {string} channel `rust`, `c_abi`, `mcp`, `http`, `cli` or `deadline`.
 * @property {string} outcome `won`, `lost`, `no_longer_active`, `invalid`, `expired`,
 *   or on a quorum bundle `voted`, `not_eligible` or `already_voted` (QUO-7).
 * @property {string} digest
 */

/**
 * A respond's or cancel's reply (WIRE-1, UI-6): won (`claimed: true`) or
 * lost to a winner, whose status and response it carries; or, on a quorum
 * bundle, this caller's vote recorded (`claimed: false`, status
 * `pending`, response `null`, QUO-3).
 * @typedef {object} SettleReply
 * @property {boolean} claimed
 * @property {string} status
 * @property {Response} response `null` only for a vote recorded.
 * @property {Quorum | null} [quorum]
 */

/**
 * The `data` of a stream event (EVT-2): the asked bundle's element
 * (`bundle.asked`), `{status, response}` (`bundle.resolved`) or
 * `{reason}` (`bundle.closed`) or `{user_id, rejected, votes}`
 * (`bundle.voted`, QUO-7), `{n, next_at}` (`bundle.reminded`) or `{to}`
 * (`bundle.escalated`, NUDGE-2); read only as far as each needs.
 * @typedef {object} EventData
 * @property {number} [n]
 * @property {string[]} [to]
 * @property {string} [created_at]
 * @property {string} [user_id]
 * @property {string} [status]
 * @property {Response | null} [response]
 * @property {string} [reason]
 */

/**
 * One message of the event stream (EVT-2, HTTP-6).
 * @typedef {object} StreamEvent
 * @property {string} position
 * @property {string} type
 * @property {string} at
 * @property {string} pending_id
 * @property {string} task_id
 * @property {EventData | null} data
 */

/**
 * A person's name as the caller may read it (PPL-1a); `""` when the
 * directory has none.
 * @typedef {object} Person
 * @property {string} user_id
 * @property {string} name
 */

/**
 * `people`'s reply (PPL-1a), for ids or for who a bundle reaches.
 * @typedef {object} PeopleReply
 * @property {Person[]} people
 */

/**
 * `whoami`'s reply (PPL-1a).
 * @typedef {object} Caller
 * @property {string} kind
 * @property {string} user_id
 * @property {string} agent_id
 * @property {string} name `""` when the directory has none.
 */

/**
 * `GET /api/v1/link/bundle`'s reply (LINK-3): the bundle as the link's
 * user sees it, whose link it is, and the names the bundle names.
 * @typedef {object} LinkBundle
 * @property {BundleDetail} bundle
 * @property {Person} as
 * @property {Person[]} people
 */

/**
 * What an error carries (WIRE-1); other keys only on success.
 * @typedef {object} ErrorBody
 * @property {string} [error]
 * @property {string} [code]
 */

/**
 * A reply: its status (`0` when the server cannot be reached) and its
 * JSON. The body has T's shape only when the status is 200: the code
 * reads nothing but `error` before it has checked that (and the shape,
 * where a malformed reply could break the view).
 * @template T
 * @typedef {{ status: number, body: T & ErrorBody }} Reply
 */

const meta = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="clarion-api"]'));
// UI-5: the API may live on another origin of the same site.
const linkMode = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="clarion-mode"]'));
// LINK-2: the one-bundle page is one level down (`/a/<token>`): the API
// is beside the inbox's root, as its own files are.
const pageBase = linkMode && linkMode.content === 'link' ? new URL('../', document.baseURI).toString() : document.baseURI;
const apiBase = meta && meta.content ? meta.content.replace(/\/$/, '') + '/' : pageBase;

/** What a 401 does; inbox.js sets it before the first request. @type {(message: string) => void} */
let signedOut = () => {};

/**
 * Says what to do when the server no longer knows who this is (a 401):
 * show the sign-in with the message given.
 * @param {(message: string) => void} show
 */
export function onSignedOut(show) {
  signedOut = show;
}

/**
 * @param {string} path relative to the API's base, like `api/v1/events`.
 * @returns {string}
 */
export const apiUrl = (path) => new URL(path, apiBase).toString();

/**
 * Every request carries its credentials, also cross-origin (UI-5).
 * @template [T=unknown] the body's shape on a 200.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON when given.
 * @returns {Promise<Reply<T>>}
 */
export async function request(method, path, body) {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, credentials: 'include', cache: 'no-store', headers: {} };
  if (state.link) {
    // LINK-3: the link is the one credential; no cookie goes with it.
    init.credentials = 'omit';
    init.headers['Authorization'] = 'Link ' + state.link;
  }
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(apiUrl(path), init);
  } catch (error) {
    return { status: 0, body: /** @type {T & ErrorBody} */ ({ error: 'the server cannot be reached' }) };
  }
  let data = {};
  try {
    data = await response.json();
  } catch (error) {
    data = {};
  }
  if (state.link && response.status === 200 && method === 'GET' && path === LINK_BUNDLE) {
    data = linkBundle(data);
  }
  if (state.link && response.status === 401) {
    // LINK-3: the link no longer verifies (expired, its key rotated).
    signedOut('');
  } else if (response.status === 401 && !(method === 'POST' && path === 'api/v1/session')) {
    // The first refusal after a sign-in says why; the others in flight
    // with it leave the sign-in, and its message, as they are.
    if (state.principal) signedOut('Your session has ended. Sign in again.');
    else if ($('sign-in').hidden) signedOut('');
  }
  return { status: response.status, body: /** @type {T & ErrorBody} */ (data || {}) };
}

/** LINK-3: the link API's read of its one bundle. */
const LINK_BUNDLE = 'api/v1/link/bundle';

/**
 * LINK-3: the link API's reply read as the bundle's own (`GET
 * /api/v1/clarification/{id}`), so every view reads a bundle one way;
 * whose link it is and the names it carries are kept.
 * @param {object} data
 * @returns {object}
 */
function linkBundle(data) {
  const reply = /** @type {Partial<LinkBundle> | null} */ (data);
  if (!reply || typeof reply !== 'object' || !reply.bundle || !reply.as) return data;
  state.linkAs = reply.as;
  for (const person of [reply.as, ...(Array.isArray(reply.people) ? reply.people : [])]) {
    if (person && typeof person.user_id === 'string' && typeof person.name === 'string') {
      names.set(person.user_id, person.name);
    }
  }
  return reply.bundle;
}

/**
 * A bundle's path; in one-bundle mode (LINK-3) the link API's, which
 * names its bundle itself.
 * @param {string} id a bundle's `pending_id`.
 * @param {string} [tail] `respond` or `cancel`.
 * @returns {string}
 */
export const bundlePath = (id, tail) => state.link
  ? 'api/v1/link/' + (tail || 'bundle')
  : 'api/v1/clarification/' + encodeURIComponent(id) + (tail ? '/' + tail : '');

/**
 * A listing's path (the inbox, or the history of UI-18), with the
 * workspace filter.
 * @param {Record<string, string | number | null | undefined>} params
 * @param {string} [path]
 * @returns {string}
 */
export function listPath(params, path = 'api/v1/clarification') {
  const query = new URLSearchParams();
  if (state.filter) query.set('workspace_id', state.filter);
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) query.set(key, String(value));
  }
  return path + '?' + query.toString();
}

/**
 * An operation by its WIRE-5 name, at `POST /api/v1/rpc/{op}`.
 * @param {string} op
 * @returns {string}
 */
export const rpcPath = (op) => 'api/v1/rpc/' + op;

/** PPL-1a: the names learned this page load, by user id (`""`: none
 *  returned). Forgotten at sign-out and when members change.
 *  @type {Map<string, string>} */
const names = new Map();
/** The ids of the batch not yet sent, and the batch's promise.
 *  @type {Set<string>} */
let queued = new Set();
/** @type {Promise<void> | null} */
let batch = null;
/** Each id being asked, until its batch is answered.
 *  @type {Map<string, Promise<void>>} */
const asking = new Map();
/** Changes when the names are forgotten: a late reply is dropped. */
let namesGeneration = 0;
/** `people` names at most this many ids at once. */
const PEOPLE_IDS = 100;

/** Sends the queued ids, a hundred at a time. */
async function sendBatch() {
  const ids = [...queued];
  queued = new Set();
  batch = null;
  const generation = namesGeneration;
  if (state.link) {
    // LINK-3: a link reads no directory; its bundle's names came with it.
    for (const id of ids) {
      if (!names.has(id)) names.set(id, '');
      asking.delete(id);
    }
    return;
  }
  for (let at = 0; at < ids.length; at += PEOPLE_IDS) {
    const chunk = ids.slice(at, at + PEOPLE_IDS);
    /** @type {Reply<PeopleReply>} */
    const reply = await request('POST', rpcPath('people'), { user_ids: chunk });
    if (generation !== namesGeneration) return;
    if (reply.status === 200 && Array.isArray(reply.body.people)) {
      for (const person of reply.body.people) {
        if (person && typeof person.user_id === 'string' && typeof person.name === 'string') {
          names.set(person.user_id, person.name);
        }
      }
      // Not returned: no name to show, and no need to ask again.
      for (const id of chunk) if (!names.has(id)) names.set(id, '');
    }
    for (const id of chunk) asking.delete(id);
  }
}

/**
 * PPL-1a: learns the names of `ids`, each asked once a page load; the ids
 * asked in one turn of the event loop go in one `people` call. Resolves
 * when they are known (or could not be read: then {@link nameOf} says
 * the id).
 * @param {string[]} ids
 * @returns {Promise<void>}
 */
export async function learnNames(ids) {
  /** @type {Promise<void>[]} */
  const waits = [];
  for (const id of new Set(ids)) {
    if (!id || names.has(id)) continue;
    let wait = asking.get(id);
    if (!wait) {
      queued.add(id);
      if (!batch) batch = Promise.resolve().then(sendBatch);
      wait = batch;
      asking.set(id, wait);
    }
    waits.push(wait);
  }
  await Promise.all(waits);
}

/**
 * A person's name for people: the directory's, else the id itself.
 * @param {string} id
 * @returns {string}
 */
export const nameOf = (id) => names.get(id) || id;

/** Forgets the names learned: another principal, or other members. */
export function forgetNames() {
  names.clear();
  asking.clear();
  queued = new Set();
  batch = null;
  namesGeneration += 1;
}
