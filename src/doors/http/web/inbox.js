// @ts-check
// The web inbox (UI-1..9). Plain JavaScript in ES modules, no build
// step, no other origin; this entry wires the page to the modules in
// js/ and starts. Everything agent-written is set with textContent,
// never as markup (UI-1). Requirement ids name the rule each part
// enforces.

import { cancelBundle, closeAnswer, limitText, submitAnswer, submitReject, toggleReject } from './js/answer.js';
import { loadAttempts } from './js/attempts.js';
import { $ } from './js/dom.js';
import { closeHelp, onKey, openHelp } from './js/keys.js';
import { loadMore, refreshAges, reloadList } from './js/list.js';
import { signIn, signOut, start } from './js/session.js';
import { state } from './js/state.js';

function wire() {
  $('sign-in-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', signOut);
  $('filter-form').addEventListener('submit', (event) => {
    event.preventDefault();
    state.filter = /** @type {HTMLInputElement} */ ($('workspace')).value.trim();
    state.current = 0;
    reloadList();
  });
  $('load-more').addEventListener('click', loadMore);
  $('answer-form').addEventListener('submit', (event) => {
    event.preventDefault();
    submitAnswer();
  });
  $('reject-open').addEventListener('click', toggleReject);
  $('reject-send').addEventListener('click', submitReject);
  $('cancel-bundle').addEventListener('click', cancelBundle);
  $('close').addEventListener('click', closeAnswer);
  $('settled-close').addEventListener('click', closeAnswer);
  $('attempts').addEventListener('toggle', () => {
    if (/** @type {HTMLDetailsElement} */ ($('attempts')).open) loadAttempts();
  });
  $('help-open').addEventListener('click', openHelp);
  $('help-close').addEventListener('click', closeHelp);
  limitText(/** @type {HTMLTextAreaElement} */ ($('reject-reason')), $('reject-reason-count'), $('reject-reason-limit'));
  document.addEventListener('keydown', onKey);
  setInterval(refreshAges, 30000);
}

wire();
start();
