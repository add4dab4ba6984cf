// @ts-check
// The "Answered" view (UI-18): what was decided, newest first, paged
// through `list_settled` (LIST-12) under the workspace filter, each with
// its outcome, who decided and when; it grows live, a bundle settled while
// it shows appearing at its top.

import { bundlePath, listPath, request } from './api.js';
import { $, el, setTimeText, timeEl, toast } from './dom.js';
import { ageText, deciderText, decisionText, placeText, trimmed } from './format.js';
import { plainInline } from './markdown.js';
import { openBundle } from './nav.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').SettledPage} SettledPage */

const PAGE_SIZE = 50;

/** @type {Record<string, string>} */
const OUTCOME = { answered: 'Answered', rejected: 'Rejected', cancelled: 'Cancelled' };

/**
 * LIST-12: newest resolution first, ties by id descending.
 * @param {BundleDetail} a
 * @param {BundleDetail} b
 * @returns {number}
 */
function newestFirst(a, b) {
  /** @param {BundleDetail} detail */
  const at = (detail) => (detail.response && detail.response.responded_at) || '';
  if (at(a) !== at(b)) return at(a) < at(b) ? 1 : -1;
  if (a.pending_id !== b.pending_id) return a.pending_id < b.pending_id ? 1 : -1;
  return 0;
}

/**
 * Whether a body is a settled bundle the view can show.
 * @param {unknown} body
 * @returns {body is BundleDetail}
 */
function isSettled(body) {
  const detail = /** @type {BundleDetail} */ (body);
  return Boolean(detail && typeof detail.pending_id === 'string' && Array.isArray(detail.questions) &&
    detail.response && OUTCOME[detail.status]);
}

/** Reads the first page again (on showing the view, or a new filter). */
export async function reloadHistory() {
  const generation = ++state.historyGeneration;
  /** @type {Reply<SettledPage>} */
  const reply = await request('GET', listPath({ limit: PAGE_SIZE }, 'api/v1/history'));
  if (generation !== state.historyGeneration) return;
  if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
    if (reply.status !== 401) {
      $('history-empty').textContent = 'Could not load what was decided: ' + (reply.body.error || 'status ' + reply.status);
      $('history-empty').hidden = false;
    }
    return;
  }
  state.history = [];
  addDecided(reply.body.bundles);
  state.historyCursor = reply.body.next_cursor || null;
  state.historyLoaded = true;
  renderHistory();
}

export async function loadMoreHistory() {
  if (!state.historyCursor) return;
  const generation = state.historyGeneration;
  /** @type {Reply<SettledPage>} */
  const reply = await request('GET', listPath({ limit: PAGE_SIZE, cursor: state.historyCursor }, 'api/v1/history'));
  if (generation !== state.historyGeneration) return;
  if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
    if (reply.status !== 401) toast('Could not load more: ' + (reply.body.error || 'status ' + reply.status));
    return;
  }
  addDecided(reply.body.bundles);
  state.historyCursor = reply.body.next_cursor || null;
  renderHistory();
}

/** @param {unknown[]} bundles */
function addDecided(bundles) {
  const shown = new Set(state.history.map((detail) => detail.pending_id));
  for (const detail of bundles) {
    if (isSettled(detail) && !shown.has(detail.pending_id)) {
      state.history.push(detail);
      shown.add(detail.pending_id);
    }
  }
  state.history.sort(newestFirst);
}

/**
 * UI-18: a bundle settled while the view is loaded joins it at its top,
 * if the filter lets it in (its element names its workspace).
 * @param {string} id
 */
export async function historyLearns(id) {
  if (!state.historyLoaded) return;
  const generation = state.historyGeneration;
  /** @type {Reply<BundleDetail>} */
  const reply = await request('GET', bundlePath(id));
  if (generation !== state.historyGeneration || reply.status !== 200 || !isSettled(reply.body)) return;
  if (state.filter && reply.body.workspace_id !== state.filter) return;
  addDecided([reply.body]);
  renderHistory();
}

/**
 * @param {BundleDetail} detail
 * @returns {HTMLLIElement}
 */
function decidedCard(detail) {
  const item = el('li');
  const button = el('button', 'bundle decided');
  button.type = 'button';
  button.dataset.id = detail.pending_id;
  const line = el('span', 'line');
  line.append(el('span', 'chip outcome ' + detail.status, OUTCOME[detail.status]));
  const response = detail.response;
  if (response) {
    line.append(el('span', 'who', 'by ' + deciderText(response, detail.decided_by_caller === true)));
    const when = timeEl(response.responded_at, ageText((Date.now() - Date.parse(response.responded_at)) / 1000));
    when.className = 'when';
    line.append(when);
  }
  line.append(el('span', 'place', placeText(detail)));
  button.append(line);
  const titles = el('span', 'titles');
  for (const question of detail.questions) titles.append(el('span', 'title', question.title || question.prompt));
  button.append(titles);
  const first = detail.questions[0];
  if (first && first.title && first.prompt) button.append(el('span', 'prompt-line', trimmed(plainInline(first.prompt), 140)));
  // What was decided, in the words of the options.
  button.append(el('span', 'decision', decisionText(detail)));
  button.addEventListener('click', () => openBundle(detail.pending_id, 'history'));
  item.append(button);
  return item;
}

export function renderHistory() {
  const list = $('history-list');
  list.replaceChildren(...state.history.map(decidedCard));
  $('history-empty').hidden = state.history.length > 0 || !state.historyLoaded;
  $('history-empty').textContent = state.filter
    ? 'Nothing was decided in workspace \u201c' + state.filter + '\u201d yet.'
    : 'Nothing was decided yet.';
  $('history-more').hidden = !state.historyCursor;
}

/** The ages of the decided cards, now. */
export function refreshHistoryAges() {
  for (const time of $('history-list').querySelectorAll('time.when')) {
    const iso = time.getAttribute('datetime') || '';
    setTimeText(time, ageText((Date.now() - Date.parse(iso)) / 1000));
  }
}

/** Forgets the view (sign-out, a new filter). */
export function forgetHistory() {
  state.history = [];
  state.historyCursor = null;
  state.historyLoaded = false;
  state.historyGeneration += 1;
  $('history-list').replaceChildren();
  $('history-more').hidden = true;
  $('history-empty').hidden = true;
}
