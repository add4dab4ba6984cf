// @ts-check
// The attempts view (UI-12): a bundle's ledger (AUD-3) — who tried, when,
// through which door, with what outcome — read when the person opens it,
// and read again when the bundle settles while it is open.

import { bundlePath, request } from './api.js';
import { $, el, localTime } from './dom.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').Attempt} Attempt */

/** @type {Record<string, string>} */
const DOOR = {
  rust: 'Rust API',
  c_abi: 'C ABI',
  mcp: 'MCP',
  http: 'web or HTTP',
  cli: 'command line',
  deadline: 'deadline',
};

/** @type {Record<string, string>} */
const OUTCOME = {
  won: 'won',
  lost: 'lost: someone else was first',
  no_longer_active: 'too late: no longer active',
  invalid: 'refused as invalid',
  expired: 'withdrawn at the deadline',
};

/** Which bundle the view shows, so a late reply for another is dropped. */
let showing = '';

/**
 * Who tried, in words.
 * @param {Attempt} attempt
 * @returns {string}
 */
function who(attempt) {
  if (attempt.principal_kind === 'deadline') return 'the deadline';
  if (attempt.principal_kind === 'system') return 'system';
  if (attempt.principal_kind === 'agent') return 'agent ' + attempt.agent_id + ' of ' + attempt.user_id;
  return attempt.user_id || attempt.principal_kind;
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

/** Reads and shows the ledger of the bundle in view. */
export async function loadAttempts() {
  const id = showing;
  if (!id) return;
  $('attempts-note').textContent = 'Loading…';
  /** @type {Reply<{attempts: Attempt[]}>} */
  const reply = await request('GET', bundlePath(id, 'attempts'));
  if (id !== showing) return;
  const attempts = reply.status === 200 && Array.isArray(reply.body.attempts) ? reply.body.attempts : null;
  const rows = $('attempts-body');
  if (!attempts) {
    rows.replaceChildren();
    $('attempts-note').textContent = 'Could not read the attempts: ' + (reply.body.error || 'status ' + reply.status);
    return;
  }
  rows.replaceChildren(...attempts.map((attempt) => {
    const row = el('tr', 'attempt ' + attempt.outcome);
    const when = el('td', '', localTime(attempt.at));
    when.title = attempt.at;
    const digest = el('td', 'digest', attempt.digest.slice(0, 12));
    digest.title = 'SHA-256 of what was sent: ' + attempt.digest;
    row.append(when, el('td', '', who(attempt)), el('td', '', DOOR[attempt.channel] || attempt.channel),
      el('td', '', OUTCOME[attempt.outcome] || attempt.outcome), digest);
    return row;
  }));
  $('attempts-note').textContent = attempts.length
    ? attempts.length + (attempts.length === 1 ? ' attempt' : ' attempts') + ', oldest first.'
    : 'Nobody has tried to answer it yet.';
}
