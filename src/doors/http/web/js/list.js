// @ts-check
// The inbox (UI-3): its pages, the catch-up after asked events, and one
// card per bundle (a quorum bundle's marked once the person voted, QUO-8;
// a reminded one says how often, NUDGE-5).

import { listPath, request } from './api.js';
import { refreshCount } from './count.js';
import { $, announce, el, setTimeText, textNodes, timeEl, toast } from './dom.js';
import { ageChangesIn, ageText, countOf, countdownChangesIn, countdownText, placeText, remindedText, secondsLeft, titleOf, trimmed } from './format.js';
import { plainInline, renderInline } from './markdown.js';
import { openBundle } from './nav.js';
import { notifyArrival } from './notify.js';
import { hasVoted } from './quorum.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').Bundle} Bundle */
/** @typedef {import('./api.js').ListPage} ListPage */
/** @typedef {import('./api.js').Nudges} Nudges */
/** @typedef {import('./state.js').ListedBundle} ListedBundle */

const PAGE_SIZE = 50;
const CATCH_UP_SIZE = 200;

/**
 * Its age now, from the server's `age_seconds` when it was received.
 * @param {ListedBundle} bundle
 * @returns {number} seconds.
 */
const ageOf = (bundle) => bundle.age_seconds + (performance.now() - bundle.receivedAt) / 1000;

/**
 * UI-11: seconds until its deadline, on the server's clock, or `null`.
 * @param {ListedBundle} bundle
 * @returns {number | null}
 */
export const untilDeadline = (bundle) => secondsLeft(bundle, bundle.receivedAt);

export async function reloadList() {
  const generation = ++state.listGeneration;
  state.catchUp = null;
  /** @type {Reply<ListPage>} */
  const reply = await request('GET', listPath({ limit: PAGE_SIZE }));
  if (generation !== state.listGeneration) return;
  if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
    if (reply.status !== 401) {
      $('live').textContent = 'Could not load the inbox: ' + (reply.body.error || 'status ' + reply.status);
    }
    return;
  }
  state.bundles = [];
  addBundles(reply.body.bundles);
  state.nextCursor = typeof reply.body.next_cursor === 'string' ? reply.body.next_cursor : null;
  state.current = Math.min(state.current, Math.max(0, state.bundles.length - 1));
  renderList();
  refreshCount();
  // Asked events that came while this list was read may be newer.
  catchUp();
}

export async function loadMore() {
  if (!state.nextCursor) return;
  const generation = state.listGeneration;
  /** @type {Reply<ListPage>} */
  const reply = await request('GET', listPath({ limit: PAGE_SIZE, cursor: state.nextCursor }));
  if (generation !== state.listGeneration) return;
  if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
    if (reply.status !== 401) toast('Could not load more: ' + (reply.body.error || 'status ' + reply.status));
    return;
  }
  addBundles(reply.body.bundles);
  state.nextCursor = typeof reply.body.next_cursor === 'string' ? reply.body.next_cursor : null;
  renderList();
}

/** New bundles: fetch those created since the earliest asked event
 *  not yet fetched (the listing applies the filter and visibility).
 *  With pages still unloaded, only those inside the loaded part are
 *  added; "Load more" brings the rest in order. */
export function catchUp() {
  if (state.catchUp || !state.askedSince) return;
  const since = state.askedSince;
  state.askedSince = null;
  const run = {};
  state.catchUp = run;
  const generation = state.listGeneration;
  /** @type {Promise<Reply<ListPage>>} */
  const fetched = request('GET', listPath({ created_since: since, limit: CATCH_UP_SIZE }));
  fetched.then((reply) => {
    if (state.catchUp === run) state.catchUp = null;
    if (generation !== state.listGeneration) return;
    if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
      if (reply.status !== 401) reloadList();
      return;
    }
    if (reply.body.next_cursor) {
      reloadList();
      return;
    }
    const last = state.bundles[state.bundles.length - 1];
    const fresh = reply.body.bundles.filter((bundle) =>
      !state.nextCursor || (last && order(bundle, last) <= 0));
    const added = addBundles(fresh);
    renderList();
    // UI-20, UI-21: each arrival is said with its title, and notified
    // while the page is hidden.
    if (added.length === 1) announce('New request: ' + titleOf(added[0]));
    else if (added.length > 1) announce(added.length + ' new requests, the first: ' + titleOf(added[0]));
    for (const bundle of added) notifyArrival(bundle);
    catchUp();
  });
}

/**
 * LIST-3: oldest first, ties by id (the timestamps sort as text).
 * @param {Bundle} a
 * @param {Bundle} b
 * @returns {number}
 */
function order(a, b) {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  if (a.pending_id !== b.pending_id) return a.pending_id < b.pending_id ? -1 : 1;
  return 0;
}

/**
 * Adds the well-formed ones not listed, settled or closed yet, in order.
 * @param {Bundle[]} bundles
 * @returns {ListedBundle[]} the ones added.
 */
function addBundles(bundles) {
  /** @type {ListedBundle[]} */
  const added = [];
  const now = performance.now();
  const shown = new Set(state.bundles.map((bundle) => bundle.pending_id));
  for (const bundle of bundles) {
    const wellFormed = bundle && typeof bundle.pending_id === 'string' &&
      typeof bundle.created_at === 'string' && Array.isArray(bundle.questions);
    if (!wellFormed || shown.has(bundle.pending_id) || state.settled.has(bundle.pending_id)) continue;
    const listed = Object.assign(bundle, { receivedAt: now });
    // UI-11: one whose deadline came while the reply travelled is due.
    const left = untilDeadline(listed);
    if (left !== null && left <= 0) continue;
    state.bundles.push(listed);
    added.push(listed);
  }
  state.bundles.sort(order);
  return added;
}

/**
 * NUDGE-5: a listed bundle's reminders and escalation read again (a
 * `bundle.reminded` event); its card says how often it was reminded. A
 * reply read before another never takes the count back.
 * @param {string} id
 * @param {Nudges | null | undefined} nudges
 */
export function learnNudges(id, nudges) {
  const listed = state.bundles.find((bundle) => bundle.pending_id === id);
  if (!listed || !nudges) return;
  const known = listed.nudges ? listed.nudges.reminders_sent : 0;
  if (nudges.reminders_sent < known) return;
  listed.nudges = nudges;
  renderList();
}

/** @param {string} id */
export function removeBundle(id) {
  const index = state.bundles.findIndex((bundle) => bundle.pending_id === id);
  if (index < 0) return;
  const active = document.activeElement;
  const hadFocus = active instanceof HTMLElement && active.dataset.id === id;
  state.bundles.splice(index, 1);
  if (state.current > index) state.current -= 1;
  renderList();
  if (hadFocus) focusCurrent();
}

/** Focus on the list's current bundle, or on the heading when none. */
export function focusInbox() {
  if (state.bundles.length) focusCurrent();
  else $('inbox-heading').focus();
}

/** One card per bundle, kept across renders (keyed by id): a card
 *  someone points at or has focused is never swapped for a copy.
 *  @type {Map<string, HTMLLIElement>} */
export const cards = new Map();

/**
 * @param {string} id
 * @returns {number} its index in the list, or -1.
 */
function indexOf(id) {
  return state.bundles.findIndex((bundle) => bundle.pending_id === id);
}

/**
 * @param {ListedBundle} bundle
 * @returns {HTMLLIElement}
 */
function card(bundle) {
  const known = cards.get(bundle.pending_id);
  if (known) return known;
  const item = el('li');
  const button = el('button', 'bundle');
  button.type = 'button';
  button.dataset.id = bundle.pending_id;
  const line = el('span', 'line');
  if (bundle.kind === 'permission') line.append(el('span', 'chip permission', 'Permission'));
  line.append(el('span', 'place', placeText(bundle)));
  const age = timeEl(bundle.created_at, ageText(ageOf(bundle)));
  age.className = 'age';
  line.append(age);
  const questions = bundle.questions.length;
  line.append(el('span', '', countOf(questions, 'question')));
  if (bundle.quorum) {
    // QUO-8: what it needs, and whether this person voted (renderList).
    line.append(el('span', 'chip quorum', countOf(bundle.quorum.approvals, 'approval') + ' needed'));
    const voted = el('span', 'chip you-voted', 'You voted');
    voted.hidden = true;
    line.append(voted);
  }
  // NUDGE-5: how often it was reminded, in words (renderList).
  const reminded = el('span', 'chip reminded', '');
  reminded.hidden = true;
  line.append(reminded);
  if (bundle.expires_at) {
    line.append(el('span', 'chip deadline', ''));
    line.append(el('span', 'then', 'then ' + (bundle.on_expire || 'expire')));
  }
  button.append(line);
  if (bundle.context) {
    const context = el('span', 'context');
    context.append(renderInline(bundle.context));
    button.append(context);
  }
  const titles = el('span', 'titles');
  for (const question of bundle.questions) {
    const title = el('span', 'title');
    title.append(question.title ? textNodes(question.title) : renderInline(question.prompt));
    titles.append(title);
  }
  button.append(titles);
  const first = bundle.questions[0];
  if (first && first.title && first.prompt) button.append(el('span', 'prompt-line', trimmed(plainInline(first.prompt), 140)));
  button.addEventListener('click', () => {
    const index = indexOf(bundle.pending_id);
    if (index >= 0) state.current = index;
    openBundle(bundle.pending_id);
  });
  button.addEventListener('focus', () => {
    const index = indexOf(bundle.pending_id);
    if (index >= 0) setCurrent(index, false);
  });
  item.append(button);
  cards.set(bundle.pending_id, item);
  return item;
}

export function renderList() {
  const list = $('bundles');
  const focused = document.activeElement;
  state.current = Math.min(state.current, Math.max(0, state.bundles.length - 1));
  const items = state.bundles.map(card);
  const shown = new Set(state.bundles.map((bundle) => bundle.pending_id));
  for (const id of cards.keys()) if (!shown.has(id)) cards.delete(id);
  const unchanged = items.length === list.children.length &&
    items.every((item, index) => list.children[index] === item);
  if (!unchanged) list.replaceChildren(...items);
  if (focused instanceof HTMLElement && focused !== document.activeElement && list.contains(focused)) focused.focus();
  items.forEach((item, index) => {
    const button = /** @type {HTMLButtonElement} */ (item.firstChild);
    button.classList.toggle('current', index === state.current);
    button.tabIndex = index === state.current ? 0 : -1;
    setTimeText(button.querySelector('.age'), ageText(ageOf(state.bundles[index])));
    const voted = button.querySelector('.you-voted');
    if (voted instanceof HTMLElement) voted.hidden = !hasVoted(state.bundles[index]);
    const reminded = button.querySelector('.reminded');
    const nudges = state.bundles[index].nudges;
    const words = remindedText(nudges ? nudges.reminders_sent : 0);
    if (reminded instanceof HTMLElement && reminded.textContent !== words) {
      reminded.textContent = words;
      reminded.hidden = !words;
    }
    const deadline = button.querySelector('.deadline');
    const left = untilDeadline(state.bundles[index]);
    if (deadline && left !== null) deadline.textContent = countdownText(left);
  });
  $('empty').hidden = state.bundles.length > 0;
  $('empty').textContent = state.filter
    ? 'Nothing is waiting for you in workspace \u201c' + state.filter + '\u201d.'
    : 'Nothing is waiting for you.';
  $('load-more').hidden = !state.nextCursor;
  scheduleDeadline();
}

/** The timer of the next change of a card's text. */
let tickTimer = 0;
/** UI-11: the cards are refreshed when a text they show changes next:
 *  each second for a deadline under a minute away, at the next minute
 *  above it, and at a deadline (a due card leaves the list then). */
function scheduleDeadline() {
  clearTimeout(tickTimer);
  if (!state.bundles.length) return;
  let next = 60;
  for (const bundle of state.bundles) {
    next = Math.min(next, ageChangesIn(ageOf(bundle)));
    const left = untilDeadline(bundle);
    const change = left === null ? null : countdownChangesIn(left);
    if (change !== null) next = Math.min(next, change);
  }
  tickTimer = setTimeout(refreshAges, next * 1000 + 20);
}

/**
 * @param {number} index clamped to the list.
 * @param {boolean} focus
 */
export function setCurrent(index, focus) {
  if (!state.bundles.length) return;
  state.current = Math.max(0, Math.min(index, state.bundles.length - 1));
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ ($('bundles').querySelectorAll('button.bundle'));
  buttons.forEach((button, i) => {
    button.classList.toggle('current', i === state.current);
    button.tabIndex = i === state.current ? 0 : -1;
  });
  if (focus) focusCurrent();
}

function focusCurrent() {
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ ($('bundles').querySelectorAll('button.bundle'));
  const button = buttons[state.current];
  if (button) {
    button.focus();
    button.scrollIntoView({ block: 'nearest' });
  } else if (!$('inbox').hidden) {
    $('inbox-heading').focus();
  }
}

export function refreshAges() {
  if ($('inbox').hidden) return;
  // UI-11: a card whose deadline came leaves the list (the server no
  // longer lists it); its event confirms the outcome.
  let due = 0;
  for (const bundle of state.bundles.slice()) {
    const left = untilDeadline(bundle);
    if (left !== null && left <= 0) {
      // Never listed again: a reply read just before the deadline may
      // still bring it back. Its settlement's event still shows the
      // outcome (live.js).
      if (!state.settled.has(bundle.pending_id)) state.settled.set(bundle.pending_id, null);
      removeBundle(bundle.pending_id);
      due += 1;
    }
  }
  renderList();
  if (due) refreshCount();
}
