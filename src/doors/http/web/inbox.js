// @ts-check
// The web inbox (UI-1..22). Plain JavaScript in ES modules, no build
// step, no other origin; this entry, the top of the page's layers, wires
// the page to the modules in js/ and the views to one another, and
// starts. Everything agent-written is set as text nodes, never as markup
// (UI-1, UI-19). Requirement ids name the rule each part enforces.

import { onSignedOut } from './js/api.js';
import { cancelBundle, closeAnswer, openBundle, openNext, submitAnswer, submitReject, syncSend, toggleReject } from './js/answer.js';
import { loadAttempts } from './js/attempts.js';
import { wireConfirm } from './js/confirm.js';
import { $ } from './js/dom.js';
import { forgetHistory, loadMoreHistory, refreshHistoryAges, reloadHistory } from './js/history.js';
import { closeHelp, onKey, openHelp } from './js/keys.js';
import { limitText } from './js/limit.js';
import { linkToken, showGone, startLink } from './js/link.js';
import { focusInbox, loadMore, reloadList, removeBundle, renderList } from './js/list.js';
import { setRoute, wireWays } from './js/nav.js';
import { wireNotify } from './js/notify.js';
import { showSignIn, signIn, signOut, start } from './js/session.js';
import { state } from './js/state.js';

/**
 * UI-18: the "Waiting" and "Answered" views, tabs reachable by keyboard.
 * @param {'waiting' | 'answered'} tab
 * @param {boolean} [focus]
 */
function showTab(tab, focus) {
  state.tab = tab;
  for (const [name, panel] of [['waiting', 'waiting-panel'], ['answered', 'history-panel']]) {
    const button = $('tab-' + name);
    const selected = name === tab;
    button.setAttribute('aria-selected', String(selected));
    button.tabIndex = selected ? 0 : -1;
    $(panel).hidden = !selected;
  }
  if ($('answer').hidden && !$('inbox').hidden) setRoute(tab === 'answered' ? '#/history' : '#/');
  if (tab === 'answered' && !state.historyLoaded) reloadHistory();
  if (focus) $('tab-' + tab).focus();
}

/**
 * UI-18: the view the address names: `#/b/<pending_id>` a bundle,
 * `#/history` the "Answered" view, anything else the waiting list. Run
 * at start (a link opened, a reload) and when the address changes (the
 * back and forward buttons). Nothing is sent on the way: leaving a bundle
 * keeps its draft, as closing it does.
 */
function route() {
  // LINK-2: the one-bundle page has one view.
  if (state.link) return;
  if (!state.principal || $('inbox').hidden && $('answer').hidden) return;
  const hash = location.hash;
  const bundle = /^#\/b\/([^/]+)$/.exec(hash);
  if (bundle) {
    const id = decodeURIComponent(bundle[1]);
    if (state.open && state.open.bundle.pending_id === id) return;
    if (state.open) closeAnswer(true);
    openBundle(id, state.tab === 'answered' ? 'history' : 'list');
    return;
  }
  const tab = hash === '#/history' ? 'answered' : 'waiting';
  if (state.open) {
    state.open.from = tab === 'answered' ? 'history' : 'list';
    closeAnswer(true);
  }
  showTab(tab);
}

/** UI-17: the action bar's height, kept for `scroll-padding-bottom`. */
function trackBar() {
  const bar = $('actions');
  const note = () => document.documentElement.style.setProperty('--bar', bar.offsetHeight + 'px');
  new ResizeObserver(note).observe(bar);
  note();
}

/**
 * UI-17: on a narrow screen the bar keeps its buttons and folds what
 * each way out tells the agent behind a disclosure; on a wide one it
 * shows it.
 */
function wireWaysOut() {
  const details = /** @type {HTMLDetailsElement} */ ($('ways-more'));
  const wide = window.matchMedia('(min-width: 30.01rem)');
  const fit = () => { details.open = wide.matches; };
  wide.addEventListener('change', fit);
  fit();
}

/**
 * UI-17: a field that gets focus is never left under the sticky bar.
 * @param {FocusEvent} event
 */
function clearOfTheBar(event) {
  const target = event.target;
  if (!(target instanceof HTMLElement) || $('answer').hidden || !$('answer-form').contains(target)) return;
  const bar = $('actions');
  if (bar.contains(target)) return;
  const hidden = target.getBoundingClientRect().bottom - bar.getBoundingClientRect().top + 8;
  if (hidden > 0) window.scrollBy(0, hidden);
}

/**
 * The ways between views (nav.js) and the API's sign-out (api.js): the
 * views reach one another only through these. Leaving the answer view
 * draws the waiting list again either way: it changed while the bundle
 * was open.
 */
function wireViews() {
  onSignedOut(showSignIn);
  wireWays({
    openBundle,
    showList: () => {
      renderList();
      focusInbox();
    },
    showHistory: () => {
      renderList();
      showTab('answered');
      const card = document.querySelector('#history-list button.bundle');
      if (card instanceof HTMLElement) card.focus();
      else $('tab-answered').focus();
    },
    removeFromList: removeBundle,
  });
}

function wire() {
  $('sign-in-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', signOut);
  $('filter-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.filter = /** @type {HTMLInputElement} */ ($('workspace')).value.trim();
    state.current = 0;
    reloadList();
    forgetHistory();
    if (state.tab === 'answered') reloadHistory();
  });
  $('load-more').addEventListener('click', loadMore);
  $('history-more').addEventListener('click', loadMoreHistory);
  $('tab-waiting').addEventListener('click', () => showTab('waiting'));
  $('tab-answered').addEventListener('click', () => showTab('answered'));
  $('tabs').addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    event.preventDefault();
    event.stopPropagation();
    showTab(state.tab === 'waiting' ? 'answered' : 'waiting', true);
  });
  document.addEventListener('clarion:signed-out', () => showTab('waiting'));
  $('answer-form').addEventListener('submit', (event) => {
    event.preventDefault();
    submitAnswer();
  });
  $('questions').addEventListener('change', syncSend);
  $('reject-open').addEventListener('click', toggleReject);
  $('reject-send').addEventListener('click', submitReject);
  $('cancel-bundle').addEventListener('click', cancelBundle);
  $('close').addEventListener('click', () => closeAnswer());
  $('settled-close').addEventListener('click', () => closeAnswer());
  $('settled-next').addEventListener('click', openNext);
  $('attempts').addEventListener('toggle', () => {
    if (/** @type {HTMLDetailsElement} */ ($('attempts')).open) loadAttempts();
  });
  $('help-open').addEventListener('click', openHelp);
  $('help-close').addEventListener('click', closeHelp);
  limitText(/** @type {HTMLTextAreaElement} */ ($('reject-reason')), $('reject-reason-count'), $('reject-reason-limit'));
  wireConfirm();
  if (state.link) {
    trackBar();
    document.addEventListener('focusin', clearOfTheBar);
    document.addEventListener('keydown', onKey);
    wireWaysOut();
    return;
  }
  wireNotify((id) => {
    if (state.open) closeAnswer();
    showTab('waiting');
    focusInbox();
    openBundle(id);
  });
  trackBar();
  document.addEventListener('focusin', clearOfTheBar);
  document.addEventListener('keydown', onKey);
  // The list schedules its own refreshes (UI-11); the answered ages
  // change each minute at most.
  setInterval(refreshHistoryAges, 30000);
  window.addEventListener('popstate', route);
  document.addEventListener('clarion:started', route);
  wireWaysOut();
}

// LINK-2: the page served at `/a/<token>` shows that link's one bundle.
const mode = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="clarion-mode"]'));
if (mode && mode.content === 'link') {
  state.link = linkToken() || '-';
  onSignedOut(() => showGone());
  wire();
  startLink();
} else {
  wireViews();
  wire();
  start();
}
