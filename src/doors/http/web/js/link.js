// @ts-check
// The one-bundle page of an answer link (LINK-2, LINK-3): at
// `/a/<token>` the page reads its token from its address, and shows that
// one bundle as the link's user sees it, through the link API (the token
// as `Authorization: Link`, no cookie): its answer view, or its settled
// panel once decided, also after a reload; whose link it is; and nothing
// else (no inbox, no sign-in, no other bundle). It reads the bundle again
// every 5 seconds while it is open (no event stream).

import { request } from './api.js';
import { presentBundle, showNewVotes } from './answer.js';
import { $, setText, show } from './dom.js';
import { showClosed, showSettled } from './settled.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */

/** LINK-3: how often the open page reads its bundle again. */
const POLL_MS = 5000;

/** LINK-3: the link API's read of its bundle (api.js reads it as a bundle). */
const LINK_BUNDLE = 'api/v1/link/bundle';

/**
 * The token in the page's address: what follows its last `/a/`.
 * @returns {string}
 */
export function linkToken() {
  const path = location.pathname;
  const at = path.lastIndexOf('/a/');
  return at < 0 ? '' : path.slice(at + 3);
}

/**
 * LINK-2: the page says the link ended (it no longer verifies, or its
 * bundle is no longer seen), and nothing else.
 * @param {string} [why]
 */
export function showGone(why) {
  clearTimeout(pollTimer);
  state.open = null;
  $('who').textContent = '';
  document.title = 'This link no longer works';
  setText($('loading'), why || 'This link no longer works. Ask whoever sent it for a new one.');
  $('loading').classList.add('gone');
  show('loading');
}

/** What the page shows of the inbox's, hidden for one bundle. */
function oneBundleOnly() {
  for (const id of ['notify', 'sign-out', 'close', 'settled-next', 'settled-close', 'attempts']) $(id).hidden = true;
  const home = $('home');
  home.removeAttribute('href');
  // LINK-3: a link's user may cancel as they may themselves.
  $('cancel-bundle').hidden = false;
  $('cancel-way').hidden = false;
}

/**
 * Reads the bundle: the page's first view, and each poll.
 * @returns {Promise<Reply<BundleDetail>>}
 */
const readBundle = () => request('GET', LINK_BUNDLE);

/** Whether a read is a bundle. @param {Reply<BundleDetail>} reply */
const isBundle = (reply) => reply.status === 200 && typeof reply.body.pending_id === 'string' && Array.isArray(reply.body.questions);

/** Starts the one-bundle page. */
export async function startLink() {
  oneBundleOnly();
  const reply = await readBundle();
  if (reply.status === 401) return; // api.js said the link is gone
  if (reply.status === 404) {
    showGone('This request is gone, or you can no longer see it.');
    return;
  }
  if (!isBundle(reply) || !state.linkAs) {
    setText($('loading'), 'The request could not be read: ' + (reply.body.error || 'status ' + reply.status));
    show('loading');
    return;
  }
  const as = state.linkAs;
  state.principal = { kind: 'user', user_id: as.user_id };
  const who = $('who');
  setText(who, 'Answering as ' + (as.name || as.user_id));
  who.title = 'This link answers as ' + as.user_id + ', once.';
  const bundle = reply.body;
  presentBundle(bundle, performance.now(), 'list');
  document.title = (bundle.task_title || 'A request') + ' \u2013 clarion';
  schedule();
}

let pollTimer = 0;
function schedule() {
  clearTimeout(pollTimer);
  pollTimer = setTimeout(poll, POLL_MS);
}

/**
 * LINK-3: every 5 seconds while the bundle's form is open: settled
 * meanwhile shows its panel; a quorum's new votes show; a bundle no longer
 * seen says so. A send in flight is left to tell its own outcome.
 */
async function poll() {
  const open = state.open;
  if (!open || open.done) return;
  if (open.sending) {
    schedule();
    return;
  }
  const reply = await readBundle();
  if (state.open !== open || open.done) return;
  if (reply.status === 404) {
    showClosed('It no longer exists, or you can no longer see it.');
    return;
  }
  if (reply.status === 401) return;
  if (isBundle(reply) && !open.sending) {
    const now = reply.body;
    if (now.status !== 'pending') {
      if (now.response) {
        showSettled(now.status, now.response, 'elsewhere', now.decided_by_caller === true, 'It was settled while this page was open.');
      } else {
        showClosed('It is no longer active (' + now.status + ').');
      }
      return;
    }
    if (now.quorum) showNewVotes(now.pending_id);
  }
  schedule();
}
