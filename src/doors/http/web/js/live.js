// @ts-check
// Live updates (UI-3, UI-6): the event stream, its reconnects with
// backoff, and what each event changes.

import { apiUrl, request } from './api.js';
import { showSettledBy } from './answer.js';
import { $, announce } from './dom.js';
import { catchUp, refreshCount, reloadList, removeBundle } from './list.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').SessionReply} SessionReply */
/** @typedef {import('./api.js').StreamEvent} StreamEvent */
/** @typedef {import('./api.js').EventData} EventData */

export function closeStream() {
  if (state.stream) state.stream.close();
  state.stream = null;
}

/** The list loads once the stream is open, so nothing asked in between
 *  is missed (the stream starts at the log's head when it opens). */
export function openStream() {
  closeStream();
  const stream = new EventSource(apiUrl('api/v1/events'), { withCredentials: true });
  state.stream = stream;
  stream.onopen = () => {
    $('live').textContent = 'Live';
    reloadList();
  };
  stream.onerror = () => {
    if (state.stream !== stream) return;
    if (stream.readyState === EventSource.CLOSED) {
      state.stream = null;
      retryAfterRefusal();
    } else {
      $('live').textContent = 'Reconnecting…';
    }
  };
  for (const type of ['bundle.asked', 'bundle.resolved', 'bundle.closed']) {
    stream.addEventListener(type, /** @param {MessageEvent<string>} message */ (message) => onEvent(type, message.data));
  }
  stream.addEventListener('reset', () => reloadList());
  // HTTP-10: the sign-in ended (a token revoked, a session signed out or
  // expired) and the server closes the stream; asking who this is shows
  // the sign-in (request() does, on the 401).
  stream.addEventListener('revoked', () => {
    closeStream();
    request('GET', 'api/v1/session');
  });
}

/**
 * The stream was refused: asks why without opening one (`HEAD` opens no
 * stream). Too many streams of this sign-in (HTTP-13) says when to try
 * again, and the page waits that long; signed out (request() then shows
 * the sign-in), or the server or a proxy failing: try again, less often
 * each time.
 */
async function retryAfterRefusal() {
  let status = 0;
  let after = 0;
  try {
    const reply = await fetch(apiUrl('api/v1/events'), { method: 'HEAD', credentials: 'include', cache: 'no-store' });
    status = reply.status;
    after = Number(reply.headers.get('Retry-After'));
  } catch (error) {
    status = 0;
  }
  if (status === 429 && after > 0) {
    $('live').textContent = `Not live: too many open views of this sign-in. Retrying in ${after} s…`;
    retryStream(after * 1000);
  } else {
    $('live').textContent = 'Not live. Retrying…';
    retryStream(2000);
  }
}

/** @param {number} delay in milliseconds, doubled up to 30 s. */
function retryStream(delay) {
  clearTimeout(state.retry);
  state.retry = setTimeout(async () => {
    if (state.stream || !state.principal) return;
    /** @type {Reply<SessionReply>} */
    const me = await request('GET', 'api/v1/session');
    if (me.status === 200 && state.principal) openStream();
    else if (me.status !== 401 && state.principal) retryStream(Math.min(delay * 2, 30000));
  }, delay);
}

/**
 * @param {string} type the SSE event's name.
 * @param {string} text its data: a {@link StreamEvent} as JSON.
 */
function onEvent(type, text) {
  /** @type {StreamEvent | null} */
  let event;
  try {
    event = JSON.parse(text);
  } catch (error) {
    return;
  }
  if (!event || typeof event.pending_id !== 'string') return;
  const id = event.pending_id;
  /** @type {EventData} */
  const data = event.data && typeof event.data === 'object' ? event.data : {};
  if (type === 'bundle.asked') {
    if (state.settled.has(id)) return;
    if (typeof data.created_at === 'string' && (!state.askedSince || data.created_at < state.askedSince)) {
      state.askedSince = data.created_at;
    }
    catchUp();
  } else {
    const shown = state.bundles.some((bundle) => bundle.pending_id === id);
    state.settled.set(id, { type, data });
    removeBundle(id);
    const open = state.open;
    // A bundle settled elsewhere while open shows the winner (UI-6);
    // this page's own submission is answered by its reply instead.
    if (open && open.bundle.pending_id === id && !open.done && !open.sending) {
      showSettledBy(type, data, 'It was settled elsewhere while you had it open.');
    } else if (shown) {
      announce('A request was settled elsewhere and left the inbox.');
    }
  }
  refreshCount();
}
