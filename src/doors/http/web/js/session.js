// @ts-check
// Sign-in, sign-out and the start of a session (UI-2).

import { forgetNames, request, rpcPath } from './api.js';
import { countTimer, showCountInIcon } from './count.js';
import { $, setText, show } from './dom.js';
import { callerText, principalText } from './format.js';
import { forgetHistory } from './history.js';
import { cards, reloadList } from './list.js';
import { closeStream, openStream } from './live.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').SessionReply} SessionReply */
/** @typedef {import('./api.js').Caller} Caller */

/** Whether the signed-in principal may cancel a bundle. */
const mayCancel = () => state.principal && ['user', 'system'].includes(state.principal.kind);

/** Forgets everything of the previous principal (UI-2): nothing of
 *  theirs (bundles, drafts, filter) may show to the next one. */
function forget() {
  state.principal = null;
  state.via = null;
  state.bundles = [];
  state.nextCursor = null;
  state.filter = '';
  state.current = 0;
  state.open = null;
  state.settled.clear();
  state.drafts.clear();
  state.catchUp = null;
  state.askedSince = null;
  state.inFlight.clear();
  state.mine.clear();
  state.voted.clear();
  state.retryDelay = 0;
  forgetNames();
  forgetHistory();
  showCountInIcon(0);
  document.dispatchEvent(new CustomEvent('clarion:signed-out'));
  state.listGeneration += 1;
  state.openGeneration += 1;
  clearTimeout(countTimer);
  clearTimeout(state.retry);
  $('bundles').replaceChildren();
  cards.clear();
  /** @type {HTMLInputElement} */ ($('workspace')).value = '';
  $('count').textContent = '';
  $('live').textContent = '';
  $('load-more').hidden = true;
  $('empty').hidden = true;
}

/**
 * PPL-1a: the signed-in user's name where the id was, the id kept in the
 * tooltip; the id alone where the directory has no name.
 * @param {import('./api.js').Principal} principal
 */
async function showName(principal) {
  /** @type {Reply<Caller>} */
  const me = await request('POST', rpcPath('whoami'), {});
  const name = me.status === 200 && typeof me.body.name === 'string' ? me.body.name : '';
  if (state.principal !== principal || !name) return;
  const who = $('who');
  setText(who, callerText(principal, name));
  who.title = 'Signed in as ' + principalText(principal);
}

/** @param {string} [message] */
export function showSignIn(message) {
  closeStream();
  forget();
  $('who').textContent = '';
  $('who').title = '';
  $('sign-out').hidden = true;
  $('sign-in-error').textContent = message || '';
  document.title = 'clarion inbox';
  show('sign-in');
  $('token').focus();
}

/** @param {Event} event */
export async function signIn(event) {
  event.preventDefault();
  const field = /** @type {HTMLInputElement} */ ($('token'));
  const token = field.value.trim();
  if (!token) {
    $('sign-in-error').textContent = 'Paste an API token.';
    return;
  }
  const reply = await request('POST', 'api/v1/session', { token });
  if (reply.status === 200) {
    field.value = '';
    await start();
  } else if (reply.status === 401) {
    $('sign-in-error').textContent = 'That token is unknown or revoked.';
  } else if (reply.status === 403) {
    $('sign-in-error').textContent = 'The server does not accept sign-ins from this page\u2019s origin (see --allow-origin).';
  } else {
    $('sign-in-error').textContent = 'Sign-in failed: ' + (reply.body.error || 'status ' + reply.status);
  }
}

export async function signOut() {
  await request('DELETE', 'api/v1/session');
  showSignIn('Signed out.');
}

export async function start() {
  /** @type {Reply<SessionReply>} */
  const me = await request('GET', 'api/v1/session');
  if (me.status === 401) return; // request() showed the sign-in
  if (me.status !== 200) {
    $('loading').textContent = 'The inbox is unavailable: ' + (me.body.error || 'status ' + me.status);
    show('loading');
    return;
  }
  state.principal = me.body.principal;
  state.via = me.body.via;
  setText($('who'), principalText(state.principal));
  showName(state.principal);
  $('sign-out').hidden = state.via !== 'session';
  $('cancel-bundle').hidden = !mayCancel();
  $('cancel-way').hidden = !mayCancel();
  show('inbox');
  $('inbox-heading').focus();
  // The list loads now and again whenever the stream (re)opens, so it
  // shows even where the stream cannot open, and misses nothing asked
  // before the stream's start.
  reloadList();
  openStream();
  // UI-18: the address may name a view (a link, a reload).
  document.dispatchEvent(new CustomEvent('clarion:started'));
}
