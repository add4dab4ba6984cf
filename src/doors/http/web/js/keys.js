// @ts-check
// The keyboard (UI-8): the shortcuts of the list and of the answer view,
// and the `?` dialog that lists them.

import { closeAnswer, closeReject, digit, openBundle, rejecting, setQuestion, submitAnswer, submitReject } from './answer.js';
import { confirming } from './confirm.js';
import { $ } from './dom.js';
import { setCurrent } from './list.js';
import { state } from './state.js';

/**
 * Whether keys typed there are text (shortcuts stay inert in it).
 * @param {EventTarget | null} node
 * @returns {boolean}
 */
const isTextField = (node) =>
  node instanceof HTMLTextAreaElement ||
  (node instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit'].includes(node.type)) ||
  (node instanceof HTMLElement && node.isContentEditable);

/** @returns {HTMLDialogElement} the list of shortcuts. */
const help = () => /** @type {HTMLDialogElement} */ ($('help'));

/** @param {KeyboardEvent} event */
export function onKey(event) {
  // UI-13: the confirmation's own keys are its own (confirm.js).
  if (confirming()) return;
  // Escape, wherever it goes: a bundle still being opened stays closed.
  if (event.key === 'Escape') state.openGeneration += 1;
  if (event.defaultPrevented || help().open) return;
  const answering = !$('answer').hidden;
  if (event.isComposing) return;
  if (event.key === 'Escape') {
    if (answering) {
      event.preventDefault();
      if (rejecting() && state.open && !state.open.done) {
        closeReject();
      } else {
        closeAnswer();
      }
    }
    return;
  }
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    if (answering && state.open && !state.open.done) {
      event.preventDefault();
      // UI-13, UI-15: through the confirmation and the decisions.
      if (rejecting() && document.activeElement === $('reject-reason')) submitReject();
      else submitAnswer();
    }
    return;
  }
  if (isTextField(event.target) || event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.key === '?') {
    event.preventDefault();
    openHelp();
    return;
  }
  if (answering) answerKey(event);
  else if (!$('inbox').hidden) listKey(event);
}

/** @param {KeyboardEvent} event */
function listKey(event) {
  if (state.tab !== 'waiting') return;
  const active = document.activeElement;
  const onBundle = active && active.classList.contains('bundle');
  // Enter opens the current bundle only where it means nothing else
  // (on a button or link it is that control's own).
  const nowhere = !active || active === document.body || active === $('inbox-heading');
  switch (event.key) {
    case 'j':
    case 'ArrowDown':
      event.preventDefault();
      setCurrent(onBundle ? state.current + 1 : state.current, true);
      break;
    case 'k':
    case 'ArrowUp':
      event.preventDefault();
      setCurrent(onBundle ? state.current - 1 : state.current, true);
      break;
    case 'Enter':
      if (nowhere && state.bundles[state.current]) {
        event.preventDefault();
        openBundle(state.bundles[state.current].pending_id);
      }
      break;
    default:
  }
}

/** @param {KeyboardEvent} event */
function answerKey(event) {
  if (!state.open || state.open.done) return;
  if (/^[1-9]$/.test(event.key)) {
    // UI-14, UI-15: a checkbox toggles, a radio button is chosen (or, if
    // chosen, cleared), a decision button pressed or released.
    if (digit(Number(event.key))) event.preventDefault();
    return;
  }
  // Arrows change question among the questions (elsewhere they scroll).
  const active = document.activeElement;
  const inQuestions = active === $('answer') || $('questions').contains(active);
  if (!inQuestions) return;
  if (event.key === 'ArrowDown' || event.key === 'ArrowRight') {
    event.preventDefault();
    setQuestion(state.open.question + 1, true);
  } else if (event.key === 'ArrowUp' || event.key === 'ArrowLeft') {
    event.preventDefault();
    setQuestion(state.open.question - 1, true);
  }
}

export function openHelp() {
  if (!help().open) help().showModal();
}

export function closeHelp() {
  help().close();
}
