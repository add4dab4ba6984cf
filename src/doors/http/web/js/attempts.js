// @ts-check
// The attempts view (UI-12): a bundle's ledger (AUD-3) — who tried (by
// name where the directory has one, PPL-1a), when
// (to the second), through which door, with what outcome, and what each
// sent as far as it is known — read when the person opens it, and read
// again when the bundle settles while it is open. The ledger keeps each
// submission's digest, not the submission (AUD-1): the winner's answer
// is the bundle's response, shown in labels; any other attempt says
// whether it sent the same answer (the winner's digest) or another.

import { bundlePath, learnNames, nameOf, request } from './api.js';
import { $, el } from './dom.js';
import { absoluteTime, countOf, decisionText, localTime } from './format.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').Attempt} Attempt */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */

/** @type {Record<string, string>} */
const DOOR = {
  rust: 'Rust API',
  c_abi: 'C ABI',
  mcp: 'MCP',
  http: 'web or HTTP',
  cli: 'command line',
  deadline: 'deadline',
};

/** Each door in a sentence: "… answer through the command line …".
 *  @type {Record<string, string>} */
const THROUGH = {
  rust: 'the Rust API',
  c_abi: 'the C ABI',
  mcp: 'MCP',
  http: 'the web page or HTTP',
  cli: 'the command line',
};

/** @type {Record<string, string>} */
const OUTCOME = {
  won: 'won',
  lost: 'lost: someone else was first',
  no_longer_active: 'too late: no longer active',
  invalid: 'refused as invalid',
  expired: 'withdrawn at the deadline',
  voted: 'vote recorded',
  not_eligible: 'refused: not an eligible voter',
  already_voted: 'refused: already voted otherwise',
};

/** Which bundle the view shows, so a late reply for another is dropped. */
let showing = '';

/**
 * Who tried, in words: a person by name, else by id (PPL-1a).
 * @param {Attempt} attempt
 * @returns {string}
 */
function who(attempt) {
  if (attempt.principal_kind === 'deadline') return 'the deadline';
  if (attempt.principal_kind === 'system') return 'system';
  if (attempt.principal_kind === 'agent') return 'agent ' + attempt.agent_id + ' of ' + nameOf(attempt.user_id);
  return attempt.user_id ? nameOf(attempt.user_id) : attempt.principal_kind;
}

/**
 * Whether two attempts came from one principal.
 * @param {Attempt} a
 * @param {Attempt} b
 */
const samePrincipal = (a, b) => a.principal_kind === b.principal_kind && a.user_id === b.user_id &&
  a.agent_id === b.agent_id && a.principal_kind !== 'deadline';

/** Whether the attempt is the signed-in principal's. @param {Attempt} attempt */
function isMine(attempt) {
  const me = state.principal;
  return Boolean(me && me.kind === attempt.principal_kind && (me.user_id || '') === attempt.user_id &&
    (me.agent_id || '') === attempt.agent_id);
}

/**
 * The outcome in words; a loss to the same person says so.
 * @param {Attempt} attempt
 * @param {Attempt | undefined} winner
 * @returns {string}
 */
function outcomeText(attempt, winner) {
  if (attempt.outcome !== 'lost' || !winner) return OUTCOME[attempt.outcome] || attempt.outcome;
  if (!samePrincipal(attempt, winner)) return 'lost: ' + who(winner) + ' was first';
  const whose = isMine(attempt) ? 'your' : who(winner) + '\u2019s';
  const door = winner.channel !== attempt.channel && THROUGH[winner.channel] ? ' through ' + THROUGH[winner.channel] : '';
  return 'lost: ' + whose + ' earlier answer' + door + ' was first';
}

/**
 * What an attempt sent, as far as the ledger tells.
 * @param {Attempt} attempt
 * @param {Attempt | undefined} winner
 * @param {BundleDetail | null} bundle
 * @returns {string}
 */
function sentText(attempt, winner, bundle) {
  if (attempt === winner) return bundle && bundle.response ? decisionText(bundle) : 'the decision';
  if (attempt.outcome === 'expired') return 'nothing (the deadline)';
  if (!winner) return 'not kept (only its digest)';
  return attempt.digest === winner.digest ? 'the same answer' : 'a different answer';
}

/**
 * A fresh, closed view for the bundle `id` (the answer view opened).
 * @param {string} id
 */
export function resetAttempts(id) {
  showing = id;
  const details = /** @type {HTMLDetailsElement} */ ($('attempts'));
  details.open = false;
  $('attempts-body').replaceChildren();
  $('attempts-note').textContent = '';
}

/** Reads the ledger again if the view is open (the bundle just settled). */
export function refreshAttempts() {
  if (/** @type {HTMLDetailsElement} */ ($('attempts')).open) loadAttempts();
}

/**
 * A cell, its column's name kept for the stacked rows of a narrow screen.
 * @param {string} column
 * @param {string} text
 * @param {string} [className]
 */
function cell(column, text, className) {
  const td = el('td', className || '', text);
  td.dataset.label = column;
  return td;
}

/** Reads and shows the ledger of the bundle in view. */
export async function loadAttempts() {
  const id = showing;
  if (!id) return;
  $('attempts-note').textContent = 'Loading…';
  /** @type {Promise<Reply<{attempts: Attempt[]}>>} */
  const read = request('GET', bundlePath(id, 'attempts'));
  /** @type {Promise<Reply<BundleDetail>>} */
  const readBundle = request('GET', bundlePath(id));
  const [reply, detail] = await Promise.all([read, readBundle]);
  if (id !== showing) return;
  const attempts = reply.status === 200 && Array.isArray(reply.body.attempts) ? reply.body.attempts : null;
  const bundle = detail.status === 200 && Array.isArray(detail.body.questions) ? detail.body : null;
  const rows = $('attempts-body');
  if (!attempts) {
    rows.replaceChildren();
    $('attempts-note').textContent = 'Could not read the attempts: ' + (reply.body.error || 'status ' + reply.status);
    return;
  }
  // The names of who tried, in one request (PPL-1a).
  await learnNames(attempts.map((attempt) => attempt.user_id));
  if (id !== showing) return;
  const winner = attempts.find((attempt) => attempt.outcome === 'won');
  rows.replaceChildren(...attempts.map((attempt) => {
    const row = el('tr', 'attempt ' + attempt.outcome);
    const when = cell('When', localTime(attempt.at, true));
    when.title = absoluteTime(attempt.at, true);
    const sent = cell('Sent', sentText(attempt, winner, bundle), 'sent');
    sent.title = 'Digest of what was sent: ' + attempt.digest;
    row.append(when, cell('Who', who(attempt)), cell('Door', DOOR[attempt.channel] || attempt.channel),
      cell('Outcome', outcomeText(attempt, winner)), sent);
    return row;
  }));
  $('attempts-note').textContent = attempts.length
    ? countOf(attempts.length, 'attempt') + ', oldest first.'
    : 'Nobody has tried to answer it yet.';
}
