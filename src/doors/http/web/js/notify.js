// @ts-check
// Noticing new requests (UI-20): desktop notifications, asked for only
// when the person clicks "Notify me", one per bundle that joins the
// waiting list while the page is hidden, and one per reminder and
// escalation of a bundle the person may still act on (NUDGE-5). (The
// waiting count in the favicon is count.js's.)

import { $ } from './dom.js';
import { shown } from './format.js';
import { hasVoted, votingLocked } from './quorum.js';
import { state } from './state.js';

/** @typedef {import('./api.js').Bundle} Bundle */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */

/** Bundles already notified, so each raises one notification at most. */
const notified = new Set();

/** Steps already notified (`<pending_id> <step>`), so each raises one. */
const stepped = new Set();

/** What opens a bundle when its notification is clicked. @type {(id: string) => void} */
let opener = () => {};

/**
 * @returns {boolean} whether this browser has notifications at all.
 */
const supported = () => typeof Notification !== 'undefined';

/** Shows the control as the permission stands. */
export function syncNotifyButton() {
  const button = /** @type {HTMLButtonElement} */ ($('notify'));
  if (!supported()) {
    button.hidden = true;
    return;
  }
  button.hidden = false;
  const permission = Notification.permission;
  button.disabled = permission !== 'default';
  button.textContent = permission === 'granted'
    ? 'Notifications on'
    : permission === 'denied' ? 'Notifications blocked' : 'Notify me';
  button.title = permission === 'denied'
    ? 'The browser refuses notifications for this page; its site settings can allow them.'
    : permission === 'granted'
      ? 'A new request raises a notification while this page is hidden.'
      : 'Get a desktop notification when a request arrives while this page is hidden.';
}

/**
 * Wires "Notify me": the permission is asked on its click, never before.
 * @param {(id: string) => void} open opens a bundle.
 */
export function wireNotify(open) {
  opener = open;
  $('notify').addEventListener('click', async () => {
    if (!supported() || Notification.permission !== 'default') return;
    await Notification.requestPermission();
    syncNotifyButton();
  });
  syncNotifyButton();
}

/**
 * UI-20: one notification for a bundle that joined the waiting list while
 * the page is hidden: its first question's title and the task's title,
 * as text, tagged with its id; a click focuses the page and opens it.
 * @param {Bundle} bundle
 */
export function notifyArrival(bundle) {
  if (!supported() || Notification.permission !== 'granted' || !document.hidden) return;
  // QUO-8: a bundle the person voted on raises none.
  if (notified.has(bundle.pending_id) || hasVoted(bundle)) return;
  notified.add(bundle.pending_id);
  const first = bundle.questions[0];
  const title = (first && (first.title || first.prompt)) || 'A new request';
  const task = bundle.task_title || bundle.task_id;
  // PROD-7: a notification takes no elements: the markers as text.
  const notification = new Notification(shown(title), {
    body: task ? shown('Task: ' + task) : '',
    tag: bundle.pending_id,
  });
  notification.onclick = () => {
    window.focus();
    notification.close();
    opener(bundle.pending_id);
  };
}

/**
 * NUDGE-5, UI-20: one notification for a step of a bundle while the page
 * is hidden — "Reminder: <title>" or "Escalated to you: <title>" (to
 * anyone else who sees it, "Escalated: <title>") — only while the person
 * may still act on it: pending, not sent from this page, and on a quorum
 * bundle not voted on nor closed to their vote. Each step its own tag,
 * so a later one alerts again; a click opens the bundle.
 * @param {BundleDetail} bundle as `get_bundle` read it after the step.
 * @param {string} step `reminded <n>`, or `escalated`.
 * @param {string} title the notification's words.
 */
export function notifyStep(bundle, step, title) {
  if (!supported() || Notification.permission !== 'granted' || !document.hidden) return;
  const id = bundle.pending_id;
  if (bundle.status !== 'pending' || state.settled.has(id) || state.inFlight.has(id) || state.mine.has(id)) return;
  if (votingLocked(bundle)) return;
  const key = id + ' ' + step;
  if (stepped.has(key)) return;
  stepped.add(key);
  const task = bundle.task_title || bundle.task_id;
  // PROD-7: the markers as text.
  const notification = new Notification(shown(title), {
    body: task ? shown('Task: ' + task) : '',
    tag: id + ' ' + step,
  });
  notification.onclick = () => {
    window.focus();
    notification.close();
    opener(id);
  };
}
