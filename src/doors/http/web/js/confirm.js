// @ts-check
// UI-13: nothing is sent by accident. Sending while some question has no
// choice and no text asks first, in a modal dialog that names those
// questions; only "Send anyway" sends. Escape, "Keep answering" and
// Ctrl/⌘+Enter inside it send nothing.

import { $, el } from './dom.js';

/** @returns {HTMLDialogElement} */
const dialog = () => /** @type {HTMLDialogElement} */ ($('confirm-empty'));

/** How the open dialog ends: true for "Send anyway". @type {((send: boolean) => void) | null} */
let settle = null;

/**
 * Asks whether to send although `names` have no answer; resolves true
 * only on "Send anyway".
 * @param {string[]} names the questions' titles (or "Question n").
 * @returns {Promise<boolean>}
 */
export function confirmEmpty(names) {
  if (settle) return Promise.resolve(false);
  $('confirm-text').textContent = names.length === 1
    ? 'This question has no answer yet. If you send now, the agent gets no answer to it:'
    : 'These questions have no answer yet. If you send now, the agent gets no answer to them:';
  $('confirm-list').replaceChildren(...names.map((name) => el('li', '', name)));
  return new Promise((resolve) => {
    settle = (send) => {
      settle = null;
      if (dialog().open) dialog().close();
      resolve(send);
    };
    dialog().showModal();
    $('confirm-keep').focus();
  });
}

/** Whether the dialog is open (the page's keys leave it alone then). */
export const confirming = () => dialog().open;

/** Wires the dialog's buttons and keys, once. */
export function wireConfirm() {
  $('confirm-keep').addEventListener('click', () => settle && settle(false));
  $('confirm-send').addEventListener('click', () => settle && settle(true));
  // Escape (the dialog's own cancel) keeps answering.
  dialog().addEventListener('cancel', (event) => {
    event.preventDefault();
    if (settle) settle(false);
  });
  dialog().addEventListener('close', () => settle && settle(false));
  dialog().addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      event.stopPropagation();
      if (settle) settle(false);
    }
  });
}
