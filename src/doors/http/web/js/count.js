// @ts-check
// The waiting count (SUM-1, UI-20): in the heading, the title and the
// favicon, read from the summary a moment after a change (one request
// for a burst of them). The favicon's icons are served by the router, so
// the policy keeps `img-src 'self'`.

import { request } from './api.js';
import { $ } from './dom.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').Summary} Summary */

/** The count's pending timer; sign-out clears it. */
export let countTimer = 0;
/** The waiting count, in the heading and the title, a moment after a
 *  change (one request for a burst of them). */
export function refreshCount() {
  // LINK-3: one bundle, no inbox to count.
  if (state.link) return;
  clearTimeout(countTimer);
  countTimer = setTimeout(async () => {
    /** @type {Reply<Summary>} */
    const reply = await request('GET', 'api/v1/summary');
    if (reply.status !== 200 || !Number.isInteger(reply.body.pending_bundles)) return;
    const waiting = reply.body.pending_bundles;
    document.title = waiting ? '(' + waiting + ') clarion inbox' : 'clarion inbox';
    $('count').textContent = '(' + waiting + ')';
    showCountInIcon(waiting);
  }, 150);
}

/**
 * UI-20: the waiting count in the favicon: 1–9, then 9+; the plain icon
 * when nothing waits.
 * @param {number} waiting
 */
export function showCountInIcon(waiting) {
  const link = /** @type {HTMLLinkElement | null} */ (document.querySelector('link[rel="icon"]'));
  if (!link) return;
  const name = waiting <= 0 ? 'icon.svg' : 'icons/count-' + (waiting > 9 ? '9plus' : String(waiting)) + '.svg';
  if (link.getAttribute('href') !== name) link.setAttribute('href', name);
}
