// @ts-check
// The settled panel (UI-6, UI-18): what was decided (the answers as
// option labels and text, or the reason), who decided ("you" when it was
// the caller or this page's own send; else a person or an agent, by name
// where the attempt ledger and the directory tell (PPL-1a), the host
// system, the deadline, or a quorum with its voters by name, QUO-8) and
// when (an absolute local time), leading on
// to the next waiting bundle or back. A settled bundle shows this alone:
// nothing can be sent from it.

import { bundlePath, learnNames, nameOf, request } from './api.js';
import { refreshAttempts } from './attempts.js';
import { $, announce, el, timeEl, toast } from './dom.js';
import { absoluteTime, answerText, deciderText, questionName } from './format.js';
import { votersText } from './quorum.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').EventData} EventData */
/** @typedef {import('./api.js').Response} Response */
/** @typedef {import('./api.js').Attempt} Attempt */
/** @typedef {import('./state.js').OpenBundle} OpenBundle */

/**
 * The panel's heading for a resolution.
 * @param {string} status
 * @param {Response} response
 * @param {'own' | 'elsewhere' | 'history'} how it came to show.
 * @returns {string}
 */
function headingOf(status, response, how) {
  const word = { answered: 'Answered', rejected: 'Rejected', cancelled: 'Cancelled' }[status] || 'Settled';
  if (response.decided_by === 'deadline') return word + ' by its deadline';
  if (response.decided_by === 'quorum') return word + ' by its voters';
  return how === 'elsewhere' ? 'Already ' + word.toLowerCase() : word;
}

/** Which bundle the panel shows, so a late read for another is dropped. */
let showing = '';

/**
 * Shows what was decided.
 * @param {BundleDetail} bundle
 * @param {string} status
 * @param {Response} response
 * @param {object} how
 * @param {'own' | 'elsewhere' | 'history'} how.how
 * @param {boolean} how.mine the caller decided it.
 * @param {string} how.note
 */
function renderSettled(bundle, status, response, { how, mine, note }) {
  showing = bundle.pending_id;
  $('settled-heading').textContent = headingOf(status, response, how);
  $('settled-note').textContent = note;
  $('settled-note').hidden = !note;
  const who = el('dd', 'who', deciderText(response, mine));
  who.id = 'settled-who';
  const when = el('dd', 'when');
  if (response.responded_at) {
    when.append(timeEl(response.responded_at, absoluteTime(response.responded_at)));
  } else {
    when.textContent = 'not recorded';
  }
  $('settled-facts').replaceChildren(el('dt', '', 'Decided by'), who, el('dt', '', 'When'), when);
  if (response.decided_by === 'quorum') {
    const voters = el('dd', 'voters', '\u2026');
    voters.id = 'settled-voters';
    $('settled-facts').append(el('dt', '', 'Voters'), voters);
    showVoters(bundle.pending_id, response);
  }
  const list = $('settled-answers');
  list.replaceChildren();
  if (status === 'rejected') {
    list.append(el('dt', '', 'Reason'), el('dd', '', response.reject_reason || '(none given)'));
  } else if (status === 'cancelled') {
    list.append(el('dt', '', 'Outcome'), el('dd', '', 'Withdrawn: the agent gets no answer.'));
  } else {
    for (const answer of Array.isArray(response.answers) ? response.answers : []) {
      if (!answer || !Array.isArray(answer.selected_options)) continue;
      const index = bundle.questions.findIndex((q) => q.question_id === answer.question_id);
      const title = index >= 0 ? questionName(bundle.questions[index], index) : answer.question_id;
      list.append(el('dt', '', title), el('dd', 'winner-answer', answerText(bundle, answer)));
    }
  }
  if (!mine && how !== 'own') learnWho(bundle.pending_id, response);
}

/**
 * WIRE-6: a decision seen on the stream or in a lost race may still be
 * the caller's own (another tab, the command line); the bundle says.
 * Else a person's or an agent's is named (PPL-1a): the winner's entry in
 * the attempt ledger (AUD-3) says whose it was, and the directory its
 * name (the id where it has none).
 * @param {string} id
 * @param {Response} response
 */
async function learnWho(id, response) {
  const byPerson = response.decided_by === 'user' || response.decided_by === 'agent';
  /** @type {Promise<Reply<BundleDetail>>} */
  const readBundle = request('GET', bundlePath(id));
  /** @type {Promise<Reply<{attempts: Attempt[]}>> | null} */
  // LINK-3: a link reads no ledger.
  const readLedger = byPerson && !state.link ? request('GET', bundlePath(id, 'attempts')) : null;
  const reply = await readBundle;
  if (id !== showing) return;
  if (reply.status === 200 && reply.body.decided_by_caller === true) {
    setWho(deciderText(response, true));
    return;
  }
  const ledger = readLedger && await readLedger;
  if (!ledger || id !== showing || ledger.status !== 200 || !Array.isArray(ledger.body.attempts)) return;
  const winner = ledger.body.attempts.find((attempt) => attempt && attempt.outcome === 'won');
  if (!winner || winner.principal_kind !== response.decided_by || !winner.user_id) return;
  await learnNames([winner.user_id]);
  if (id !== showing) return;
  const name = nameOf(winner.user_id);
  setWho(winner.principal_kind === 'agent' ? 'agent ' + winner.agent_id + ' of ' + name : name);
}

/**
 * QUO-8: the voters of a quorum's decision, by name; read from the
 * bundle where the response carries none (an event's older shape).
 * @param {string} id
 * @param {Response} response
 */
async function showVoters(id, response) {
  let voters = Array.isArray(response.voters) ? response.voters : [];
  if (!voters.length) {
    /** @type {Reply<BundleDetail>} */
    const reply = await request('GET', bundlePath(id));
    const read = reply.status === 200 && reply.body.response ? reply.body.response.voters : null;
    if (Array.isArray(read)) voters = read;
  }
  const text = await votersText(voters);
  const dd = document.getElementById('settled-voters');
  if (id === showing && dd) dd.textContent = text || 'not recorded';
}

/** @param {string} text who decided, for the panel. */
function setWho(text) {
  const who = document.getElementById('settled-who');
  if (who) who.textContent = text;
}

/**
 * Shows that it ended without a resolution.
 * @param {string} note
 */
function renderClosed(note) {
  showing = '';
  $('settled-heading').textContent = 'No longer active';
  $('settled-note').textContent = note;
  $('settled-note').hidden = false;
  $('settled-facts').replaceChildren();
  $('settled-answers').replaceChildren();
}

/**
 * The note of a bundle settled before it was opened: a deadline's default
 * says so (UI-11).
 * @param {Response} response
 * @returns {string}
 */
export function defaultNote(response) {
  return response.decided_by === 'deadline' ? DEFAULT_GIVEN : '';
}

/**
 * The settled view for a `bundle.resolved` or `bundle.closed` event.
 * @param {string} type
 * @param {EventData} data
 * @param {string} note
 */
export function showSettledBy(type, data, note) {
  if (type === 'bundle.resolved' && data.response && data.status) {
    const open = state.open;
    const mine = Boolean(open && state.mine.has(open.bundle.pending_id));
    // UI-11: a default given at the deadline says so, not "elsewhere".
    const byDeadline = data.response.decided_by === 'deadline';
    showSettled(data.status, data.response, mine ? 'own' : 'elsewhere', mine, byDeadline ? DEFAULT_GIVEN : note);
  } else if (data.reason === 'deadline') {
    showClosed('Nobody answered in time: the question was withdrawn at its deadline.');
  } else {
    showClosed('It is no longer active (' + (data.reason || 'closed') + ').');
  }
}

/** UI-11: the note of a bundle its deadline settled. */
const DEFAULT_GIVEN = 'Nobody answered in time: the agent was given the default at the deadline.';

/**
 * UI-18: the settled panel, alone: what, who, when, and the way on.
 * @param {string} status
 * @param {Response} response
 * @param {'own' | 'elsewhere' | 'history'} how
 * @param {boolean} mine
 * @param {string} note
 */
export function showSettled(status, response, how, mine, note) {
  const open = state.open;
  if (!open) return;
  open.done = true;
  $('answer-form').hidden = true;
  renderSettled(open.bundle, status, response, { how, mine, note });
  showPanel(open);
}

/**
 * A bundle just opened that is settled shows its panel at once: settled
 * by an event while it was read (UI-6), or before (UI-18).
 * @param {BundleDetail} bundle
 * @param {'list' | 'history'} origin
 */
export function showIfSettled(bundle, origin) {
  const id = bundle.pending_id;
  // An event may have settled it while it was read (UI-6).
  const settledBy = state.settled.get(id);
  if (settledBy && bundle.status === 'pending') {
    showSettledBy(settledBy.type, settledBy.data, 'It was settled elsewhere just as you opened it.');
  } else if (bundle.status !== 'pending') {
    if (bundle.response) {
      // LINK-2: a link's page reloaded after its own answer shows it as
      // the "Answered" view would, not as someone else's.
      const told = origin === 'history' || (Boolean(state.link) && bundle.decided_by_caller === true);
      const note = told || bundle.response.decided_by === 'deadline'
        ? defaultNote(bundle.response)
        : 'It was settled before you opened it.';
      showSettled(bundle.status, bundle.response, told ? 'history' : 'elsewhere',
        bundle.decided_by_caller === true, note);
    } else {
      showClosed('It is no longer active (' + bundle.status + ').');
    }
  }
}

/**
 * LINK-3: the link was used already (a 410): said plainly, with what was
 * decided, read again.
 * @param {OpenBundle} open the bundle the send was for.
 */
export async function showLinkUsed(open) {
  const note = 'This link was already used: it answers only once. Nothing more was sent.';
  announce(note);
  /** @type {Reply<BundleDetail>} */
  const read = await request('GET', bundlePath(open.bundle.pending_id));
  const now = read.status === 200 ? read.body : null;
  if (state.open !== open) toast(note);
  else if (now && now.response) showSettled(now.status, now.response, 'elsewhere', now.decided_by_caller === true, note);
  else showClosed(note);
}

/** @param {string} note */
export function showClosed(note) {
  const open = state.open;
  if (!open) return;
  open.done = true;
  $('answer-form').hidden = true;
  renderClosed(note);
  showPanel(open);
}

/**
 * Shows the panel with its ways on: the next waiting bundle, and back
 * to the view it was opened from.
 * @param {OpenBundle} open
 */
function showPanel(open) {
  const next = state.bundles.find((bundle) => bundle.pending_id !== open.bundle.pending_id);
  $('settled-next').hidden = !next;
  // LINK-2: one bundle: nothing to go on to, no inbox to go back to.
  $('settled-close').hidden = Boolean(state.link);
  $('settled-close').textContent = open.from === 'history' ? 'Back to Answered' : 'Back to inbox';
  const countdown = document.getElementById('answer-countdown');
  if (countdown) countdown.hidden = true;
  // Who can answer it, and how the votes stood, no longer matter
  // (PPL-1a, QUO-8).
  $('answer-reach').hidden = true;
  $('quorum').hidden = true;
  $('settled').hidden = false;
  $('settled').focus();
  refreshAttempts();
}
