// @ts-check
// The settled panel (UI-6, UI-18): what was decided (the answers as
// option labels and text, or the reason), who decided ("you" when it was
// the caller or this page's own send; else a person, an agent, the host
// system or the deadline) and when (an absolute local time), leading on
// to the next waiting bundle or back. A settled bundle shows this alone:
// nothing can be sent from it.

import { bundlePath, request } from './api.js';
import { $, absoluteTime, el, timeEl } from './dom.js';
import { questionName } from './questions.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').Response} Response */

/** @type {Record<string, string>} */
const DECIDER = {
  user: 'another person',
  agent: 'an agent',
  system: 'the host system',
  deadline: 'its deadline',
};

/**
 * Who decided, in words (WIRE-2's `decided_by`, WIRE-6's
 * `decided_by_caller`).
 * @param {Response} response
 * @param {boolean} mine
 * @returns {string}
 */
export function deciderText(response, mine) {
  if (mine) return 'you';
  return DECIDER[response.decided_by] || 'someone (not recorded)';
}

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
  return how === 'elsewhere' ? 'Already ' + word.toLowerCase() : word;
}

/**
 * One answer as the person reads it: the chosen options' labels, then
 * the typed text in quotes, so it does not read as one more option.
 * @param {BundleDetail} bundle
 * @param {import('./api.js').Answer} answer
 * @returns {string}
 */
export function answerText(bundle, answer) {
  const question = bundle.questions.find((q) => q.question_id === answer.question_id);
  const labels = answer.selected_options.map((optionId) => {
    const option = question && question.options.find((o) => o.option_id === optionId);
    return option ? option.label : optionId;
  });
  const parts = [];
  if (labels.length) parts.push(labels.join(', '));
  if (answer.custom_text) parts.push('“' + answer.custom_text + '”');
  return parts.length ? parts.join('\n') : '(no answer)';
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
export function renderSettled(bundle, status, response, { how, mine, note }) {
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
  if (!mine && how !== 'own') learnIfMine(bundle.pending_id);
}

/**
 * WIRE-6: a decision seen on the stream or in a lost race may still be
 * the caller's own (another tab, the command line); the bundle says.
 * @param {string} id
 */
async function learnIfMine(id) {
  /** @type {Reply<BundleDetail & { decided_by_caller: boolean }>} */
  const reply = await request('GET', bundlePath(id));
  if (id !== showing || reply.status !== 200 || reply.body.decided_by_caller !== true) return;
  const who = document.getElementById('settled-who');
  if (who) who.textContent = 'you';
}

/**
 * Shows that it ended without a resolution.
 * @param {string} note
 */
export function renderClosed(note) {
  showing = '';
  $('settled-heading').textContent = 'No longer active';
  $('settled-note').textContent = note;
  $('settled-note').hidden = false;
  $('settled-facts').replaceChildren();
  $('settled-answers').replaceChildren();
}
