// @ts-check
// Live updates (UI-3, UI-6, UI-20, UI-21): the event stream, its
// reconnects with backoff, the connection's state in words, and what each
// event changes and says; a workspace's new members (PPL-2) list again;
// a vote on a quorum bundle shown is read again (QUO-8); a reminder or an
// escalation marks the card and notifies, an escalation lists again
// (NUDGE-5).

import { showNewVotes } from './answer.js';
import { apiUrl, bundlePath, forgetNames, request } from './api.js';
import { refreshCount } from './count.js';
import { $, announce } from './dom.js';
import { titleOf } from './format.js';
import { historyLearns, reloadHistory } from './history.js';
import { catchUp, learnNudges, reloadList, removeBundle, renderList } from './list.js';
import { notifyStep } from './notify.js';
import { showReach } from './reach.js';
import { showSettledBy } from './settled.js';
import { state } from './state.js';

/** UI-20: the connection's state, in words. */
export const LIVE = 'Live: new requests appear as they arrive';

/** The countdown of the next try, while not connected. */
let countdown = 0;

/**
 * UI-20: says the connection is down and counts down to the next try.
 * @param {number} seconds
 * @param {string} [why]
 */
function notConnected(seconds, why) {
  clearInterval(countdown);
  let left = Math.max(1, Math.round(seconds));
  const say = () => {
    $('live').textContent = 'Not connected' + (why ? ' (' + why + ')' : '') + ': retrying in ' + left + ' s';
  };
  say();
  countdown = setInterval(() => {
    left -= 1;
    if (left <= 0) clearInterval(countdown);
    else say();
  }, 1000);
}

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').SessionReply} SessionReply */
/** @typedef {import('./api.js').StreamEvent} StreamEvent */
/** @typedef {import('./api.js').EventData} EventData */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */

export function closeStream() {
  if (state.stream) state.stream.close();
  state.stream = null;
  clearInterval(countdown);
}

/** The list loads once the stream is open, so nothing asked in between
 *  is missed (the stream starts at the log's head when it opens). */
export function openStream() {
  closeStream();
  const stream = new EventSource(apiUrl('api/v1/events'), { withCredentials: true });
  state.stream = stream;
  // The browser tries once again at once ("Reconnecting…"); if that
  // fails too, the page takes over, with a countdown it can say (UI-20).
  let failed = false;
  stream.onopen = () => {
    failed = false;
    clearInterval(countdown);
    $('live').textContent = LIVE;
    reloadList();
  };
  stream.onerror = () => {
    if (state.stream !== stream) return;
    if (stream.readyState === EventSource.CLOSED || failed) {
      stream.close();
      state.stream = null;
      retryAfterRefusal();
    } else {
      failed = true;
      $('live').textContent = 'Reconnecting\u2026';
    }
  };
  for (const type of ['bundle.asked', 'bundle.resolved', 'bundle.closed']) {
    stream.addEventListener(type, /** @param {MessageEvent<string>} message */ (message) => onEvent(type, message.data));
  }
  stream.addEventListener('bundle.voted', /** @param {MessageEvent<string>} message */ (message) => onVoted(message.data));
  for (const type of ['bundle.reminded', 'bundle.escalated']) {
    stream.addEventListener(type, /** @param {MessageEvent<string>} message */ (message) => onStep(type, message.data));
  }
  stream.addEventListener('reset', () => reloadList());
  stream.addEventListener('workspace.members', onMembers);
  // PROD-2: the server's database is away and the stream ends; the
  // browser reconnects from the last event it saw, and the page keeps
  // retrying after a refusal.
  stream.addEventListener('unavailable', () => {
    $('live').textContent = 'Reconnecting\u2026 (the database is unavailable)';
  });
  // HTTP-10: the sign-in ended (a token revoked, a session signed out or
  // expired) and the server closes the stream; asking who this is shows
  // the sign-in (request() does, on the 401).
  stream.addEventListener('revoked', () => {
    closeStream();
    clearTimeout(state.retry);
    $('live').textContent = 'Not connected: your sign-in ended.';
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
  if (!state.principal) return;
  if (status === 429 && after > 0) {
    notConnected(after, 'too many open views of this sign-in');
    retryStream(after * 1000);
  } else {
    const delay = Math.min(Math.max(state.retryDelay * 2, 2000), 30000);
    state.retryDelay = delay;
    notConnected(delay / 1000);
    retryStream(delay);
  }
}

/** @param {number} delay in milliseconds. */
function retryStream(delay) {
  clearTimeout(state.retry);
  state.retry = setTimeout(async () => {
    if (state.stream || !state.principal) return;
    $('live').textContent = 'Reconnecting\u2026';
    /** @type {Reply<SessionReply>} */
    const me = await request('GET', 'api/v1/session');
    if (me.status === 200 && state.principal) {
      state.retryDelay = 0;
      openStream();
    } else if (me.status !== 401 && state.principal) {
      const next = Math.min(Math.max(delay * 2, 2000), 30000);
      notConnected(next / 1000);
      retryStream(next);
    }
  }, delay);
}

/**
 * PPL-2: a workspace's members changed, so what this page may see, the
 * names it may read and who can answer may have too: everything shown is
 * read again (the lists, the open bundle's "can answer" line).
 */
function onMembers() {
  forgetNames();
  reloadList();
  if (state.historyLoaded) reloadHistory();
  showReach();
}

/**
 * A stream message's event, `null` when it is not one.
 * @param {string} text a {@link StreamEvent} as JSON.
 * @returns {StreamEvent | null}
 */
function parsed(text) {
  /** @type {StreamEvent | null} */
  let event;
  try {
    event = JSON.parse(text);
  } catch (error) {
    return null;
  }
  return event && typeof event.pending_id === 'string' ? event : null;
}

/**
 * @param {StreamEvent} event
 * @returns {EventData}
 */
const dataOf = (event) => (event.data && typeof event.data === 'object' ? event.data : {});

/** The signed-in user's id, `""` for any other principal. */
const myId = () => (state.principal && state.principal.kind === 'user' && state.principal.user_id) || '';

/**
 * NUDGE-5: a reminder or an escalation of a bundle this page may see.
 * An escalation lists again, so the bundle appears for the people it
 * reaches from its time on (PPL-6). The bundle is read again: its card
 * says how often it was reminded, and while the page is hidden a
 * notification says what happened, if the person may still act on it
 * (UI-20).
 * @param {string} type `bundle.reminded` or `bundle.escalated`.
 * @param {string} text the event: a {@link StreamEvent} as JSON.
 */
async function onStep(type, text) {
  const event = parsed(text);
  if (!event || state.settled.has(event.pending_id)) return;
  const id = event.pending_id;
  const data = dataOf(event);
  const escalated = type === 'bundle.escalated';
  if (escalated) reloadList();
  /** @type {Reply<BundleDetail>} */
  const reply = await request('GET', bundlePath(id));
  if (reply.status !== 200 || reply.body.status !== 'pending' || state.settled.has(id)) return;
  const bundle = reply.body;
  learnNudges(id, bundle.nudges);
  const title = titleOf(bundle);
  const me = myId();
  const toMe = escalated && Boolean(me) && Array.isArray(data.to) && data.to.includes(me);
  // UI-21: a bundle escalated to this person arrives for them.
  if (toMe) announce('Escalated to you: ' + title);
  const words = !escalated ? 'Reminder: ' + title : (toMe ? 'Escalated to you: ' : 'Escalated: ') + title;
  notifyStep(bundle, escalated ? 'escalated' : 'reminded ' + (Number(data.n) || 0), words);
}

/**
 * QUO-8: someone voted (QUO-7): the open bundle's votes are read again,
 * so the vote shows; a vote of this user marks its card ("You voted").
 * @param {string} text the event: a {@link StreamEvent} as JSON.
 */
function onVoted(text) {
  const event = parsed(text);
  if (!event) return;
  const data = dataOf(event);
  const me = myId();
  if (me && data.user_id === me) {
    state.voted.add(event.pending_id);
    renderList();
  }
  showNewVotes(event.pending_id);
}

/**
 * @param {string} type the SSE event's name.
 * @param {string} text its data: a {@link StreamEvent} as JSON.
 */
function onEvent(type, text) {
  const event = parsed(text);
  if (!event) return;
  const id = event.pending_id;
  const data = dataOf(event);
  if (type === 'bundle.asked') {
    if (state.settled.has(id)) return;
    if (typeof data.created_at === 'string' && (!state.askedSince || data.created_at < state.askedSince)) {
      state.askedSince = data.created_at;
    }
    catchUp();
  } else {
    const listed = state.bundles.find((bundle) => bundle.pending_id === id);
    state.settled.set(id, { type, data });
    removeBundle(id);
    const open = state.open;
    // UI-21: this page's own outcome is said by its reply, never as
    // settled elsewhere, also when the event comes first.
    const ours = state.inFlight.has(id) || state.mine.has(id);
    if (open && open.bundle.pending_id === id && !open.done && !open.sending && !ours) {
      // A bundle settled elsewhere while open shows the winner (UI-6).
      // QUO-8: a quorum bundle is decided by its votes, not elsewhere.
      const byVotes = Boolean(data.response && data.response.decided_by === 'quorum');
      showSettledBy(type, data, byVotes ? 'The votes decided it while you had it open.' : 'It was settled elsewhere while you had it open.');
      announce(titleOf(open.bundle) + ' was settled elsewhere.');
    } else if (listed && !ours) {
      announce(titleOf(listed) + ' was settled elsewhere.');
    }
    // UI-18: the "Answered" view grows live.
    if (type === 'bundle.resolved') historyLearns(id);
  }
  refreshCount();
}
