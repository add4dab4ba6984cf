// @ts-check
// The answer view (UI-4, UI-13..18): a bundle's questions, drafts kept
// until sent, UI-7's limit at the input (limit.js); sending through the
// confirmation of empty questions (UI-13) or, for a permission request,
// only once every question is decided (UI-15); reject (deny) and the
// two-step cancel, each saying what the agent is told (UI-16); and the
// reply that decides what was recorded (UI-6), shown on the settled panel
// (UI-18, settled.js); and who can answer it, by name (PPL-1a, reach.js);
// a quorum bundle's votes, and the form locked once voted (QUO-8,
// quorum.js). Other views are reached through nav.js.

import { bundlePath, request } from './api.js';
import { resetAttempts } from './attempts.js';
import { confirmEmpty } from './confirm.js';
import { refreshCount } from './count.js';
import { $, announce, el, setText, show, timeEl, toast } from './dom.js';
import { ageText, answerHeading, countdownChangesIn, countdownText, defaultSentence, listOf, questionName, secondsLeft } from './format.js';
import { limitText } from './limit.js';
import { renderMarkdown } from './markdown.js';
import { removeFromList, setRoute, showHistory, showList } from './nav.js';
import { collectAnswers, emptyQuestions, fieldsets, renderQuestions, toggleDigit, undecided } from './questions.js';
import { ownVote, refreshVotes, refusal, rejectWords, showQuorum, votingLocked } from './quorum.js';
import { showReach } from './reach.js';
import { showClosed, showIfSettled, showLinkUsed, showSettled } from './settled.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').SettleReply} SettleReply */

/** UI-16: what each way out tells the agent. */
const TOLD = {
  reject: 'The agent is told you declined, with your reason if you give one.',
  deny: 'The agent is told permission was denied, with your reason if you give one.',
  cancel: 'The request is withdrawn: the agent is told it was cancelled and gets no answer.',
};

/** @param {BundleDetail} bundle */
const isPermission = (bundle) => bundle.kind === 'permission';

/**
 * Opens a bundle: the form while it is pending, else the settled panel
 * alone (UI-18).
 * @param {string} id
 * @param {'list' | 'history'} [origin] which view "Back" returns to.
 */
export async function openBundle(id, origin = 'list') {
  if (state.open) return;
  const generation = ++state.openGeneration;
  /** @type {Reply<BundleDetail>} */
  const reply = await request('GET', bundlePath(id));
  // Signed out, or another open began, while this one was read.
  if (generation !== state.openGeneration || state.open || !state.principal) return;
  const receivedAt = performance.now();
  if (reply.status !== 200) leaveRoute(id);
  if (reply.status === 404) {
    state.settled.set(id, null);
    removeFromList(id);
    toast('That request is gone, or you can no longer see it.');
    return;
  }
  const bundle = reply.body;
  if (reply.status !== 200 || typeof bundle.pending_id !== 'string' || !Array.isArray(bundle.questions)) {
    if (reply.status !== 401) toast('Could not open it: ' + (reply.body.error || 'status ' + reply.status));
    return;
  }
  presentBundle(bundle, receivedAt, origin);
}

/**
 * Shows a bundle just read: its form while pending, else its settled
 * panel. Also the one-bundle page's view of its link's bundle (LINK-2).
 * @param {BundleDetail} bundle
 * @param {number} receivedAt `performance.now()` when it was read.
 * @param {'list' | 'history'} origin
 */
export function presentBundle(bundle, receivedAt, origin) {
  const id = bundle.pending_id;
  state.open = { bundle, done: false, sending: false, question: 0, from: origin };
  // UI-18: the bundle's own address, for a link, a reload and "Back"
  // (a link's page has its own address already).
  if (!state.link) setRoute('#/b/' + encodeURIComponent(id));
  renderAnswer(bundle);
  tickCountdown(state.open, receivedAt);
  resetAttempts(id);
  show('answer');
  window.scrollTo(0, 0);
  $('answer').focus({ preventScroll: true });
  showIfSettled(bundle, origin);
}

/**
 * An open that failed leaves the bundle's address for the list's.
 * @param {string} id
 */
function leaveRoute(id) {
  if (location.hash === '#/b/' + encodeURIComponent(id)) setRoute(state.tab === 'answered' ? '#/history' : '#/', true);
}

/** The answer view's countdown timer. */
let countdownTimer = 0;
/**
 * UI-11: the answer view counts down too, refreshed when its text
 * changes (each second in the last minute), while the bundle is open.
 * @param {import('./state.js').OpenBundle} open
 * @param {number} receivedAt
 */
function tickCountdown(open, receivedAt) {
  clearTimeout(countdownTimer);
  const chip = document.getElementById('answer-countdown');
  const left = secondsLeft(open.bundle, receivedAt);
  if (!chip || left === null || state.open !== open) return;
  chip.textContent = open.done ? '' : countdownText(left);
  chip.hidden = open.done;
  const change = countdownChangesIn(left);
  if (change !== null && !open.done) countdownTimer = setTimeout(() => tickCountdown(open, receivedAt), change * 1000 + 20);
}

/** @param {BundleDetail} bundle */
function renderAnswer(bundle) {
  setText($('answer-heading'), answerHeading(bundle));
  const meta = $('answer-meta');
  const task = bundle.task_title || bundle.task_id;
  const workspace = bundle.workspace_name || bundle.workspace_id;
  const asked = el('span', 'asked', 'asked ');
  asked.append(timeEl(bundle.created_at, ageText(bundle.age_seconds)));
  meta.replaceChildren(asked);
  if (task) meta.append(el('span', 'task', 'Task: ' + task));
  if (workspace) meta.append(el('span', 'workspace', 'Workspace: ' + workspace));
  if (isPermission(bundle)) meta.prepend(el('span', 'chip permission', 'Permission request'));
  if (bundle.expires_at && bundle.status === 'pending') {
    const countdown = el('span', 'chip deadline');
    countdown.id = 'answer-countdown';
    meta.append(countdown, el('span', 'default', defaultSentence(bundle)));
  }
  $('answer-reach').hidden = true;
  delete $('answer-reach').dataset.read;
  showReach();
  const context = $('answer-context');
  context.replaceChildren(renderMarkdown(bundle.context));
  context.hidden = !bundle.context;
  const draft = state.drafts.get(bundle.pending_id);
  renderQuestions($('questions'), bundle, draft, (index) => setQuestion(index, false), limitText);
  const permission = isPermission(bundle);
  // On a phone the buttons say only their verb (UI-17: one row).
  $('submit').replaceChildren('Send', el('span', 'wide', permission ? ' decision' : ' answer'));
  $('reject-open').textContent = permission ? 'Deny\u2026' : 'Reject\u2026';
  $('reject-help').textContent = permission ? TOLD.deny : TOLD.reject;
  $('reject-term').textContent = permission ? 'Deny' : 'Reject';
  $('cancel-help').textContent = TOLD.cancel;
  $('reject-send').textContent = permission ? 'Deny permission' : 'Reject request';
  $('reject-label').textContent = permission ? 'Why are you denying it? (optional)' : 'Why are you rejecting it? (optional)';
  const reason = /** @type {HTMLTextAreaElement} */ ($('reject-reason'));
  reason.value = draft ? draft.reason : '';
  reason.dispatchEvent(new Event('input'));
  setRejecting(Boolean(draft && draft.rejecting));
  showError('', false);
  $('answer-form').hidden = false;
  $('settled').hidden = true;
  setSending(false);
  resetCancel();
  setQuestion(0, false);
  syncSend();
  // QUO-8: Reject says when one rejection decides.
  if (bundle.quorum) $('reject-help').textContent = rejectWords(bundle.quorum);
  showQuorum(bundle, FORM);
}

/** What quorum.js may do to the form (QUO-8). @type {import('./quorum.js').Form} */
const FORM = {
  sync: () => syncSend(),
  stopRejecting: () => { if (rejecting()) setRejecting(false); },
};

/** QUO-8: another vote on the open bundle (live.js). @param {string} id */
export const showNewVotes = (id) => refreshVotes(id, FORM);

/** UI-15: "Send decision" waits until every question is decided. */
export function syncSend() {
  const open = state.open;
  // QUO-8: a locked form has nothing to send, nor to ask for.
  if (!open || open.done || votingLocked(open.bundle)) return;
  const blocked = isPermission(open.bundle) && undecided(collectAnswers($('questions'), open.bundle)).length > 0;
  // "Decide … first" is over once everything is decided.
  if (!blocked && $('answer-error').dataset.undecided) showError('', false);
  const submit = /** @type {HTMLButtonElement} */ ($('submit'));
  submit.disabled = open.sending || blocked;
  submit.setAttribute('aria-describedby', blocked ? 'submit-help' : '');
  $('submit-help').hidden = !blocked || rejecting();
}

/**
 * Says why nothing was sent, or clears it.
 * @param {string} text
 * @param {boolean} undecided it asks for the undecided questions (UI-15),
 *   so it goes once they are decided.
 */
function showError(text, undecided) {
  const error = $('answer-error');
  setText(error, text);
  if (undecided) error.dataset.undecided = '1';
  else delete error.dataset.undecided;
}

/**
 * @param {number} index clamped to the questions.
 * @param {boolean} focus
 */
export function setQuestion(index, focus) {
  const sets = fieldsets($('questions'));
  if (!sets.length || !state.open) return;
  const next = Math.max(0, Math.min(index, sets.length - 1));
  state.open.question = next;
  sets.forEach((fieldset, i) => fieldset.classList.toggle('current', i === next));
  if (focus) focusQuestion(next);
}

/**
 * Focuses a question's first control (its first option, or its text).
 * @param {number} index
 */
function focusQuestion(index) {
  const fieldset = fieldsets($('questions'))[index];
  if (!fieldset) return;
  const target = /** @type {HTMLElement | null} */ (fieldset.querySelector('input, button.decision, textarea'));
  if (target) target.focus();
  fieldset.scrollIntoView({ block: 'nearest' });
}

/**
 * UI-8: a digit toggles the n-th option of the current question.
 * @param {number} n
 * @returns {boolean} whether there was such an option.
 */
export function digit(n) {
  const open = state.open;
  if (!open || open.done || votingLocked(open.bundle)) return false;
  const fieldset = fieldsets($('questions'))[open.question];
  const control = fieldset ? toggleDigit(fieldset, n) : null;
  if (!control) return false;
  control.focus();
  syncSend();
  return true;
}

function saveDraft() {
  const open = state.open;
  // QUO-8: a locked form holds the vote, not a draft.
  if (!open || open.done || votingLocked(open.bundle)) return;
  const answers = collectAnswers($('questions'), open.bundle);
  state.drafts.set(open.bundle.pending_id, {
    selected: answers.map((answer) => answer.selected_options),
    texts: answers.map((answer) => answer.custom_text),
    reason: /** @type {HTMLTextAreaElement} */ ($('reject-reason')).value,
    rejecting: !$('reject').hidden,
  });
}

/** @param {boolean} sending */
function setSending(sending) {
  for (const id of ['reject-open', 'reject-send', 'cancel-bundle']) {
    /** @type {HTMLButtonElement} */ ($(id)).disabled = sending;
  }
  if (state.open) state.open.sending = sending;
  /** @type {HTMLButtonElement} */ ($('submit')).disabled = sending;
  if (!sending) syncSend();
}

/**
 * Sends the answer (the button or Ctrl/⌘+Enter): a permission request
 * only once every question is decided (UI-15); otherwise, while some
 * question has neither a choice nor text, only after the confirmation
 * (UI-13).
 */
export async function submitAnswer() {
  const open = state.open;
  // QUO-8: a locked form sends nothing.
  if (!open || open.done || open.sending || votingLocked(open.bundle)) return;
  const answers = collectAnswers($('questions'), open.bundle);
  /** @param {number} index */
  const name = (index) => questionName(open.bundle.questions[index], index);
  if (isPermission(open.bundle)) {
    const left = undecided(answers);
    if (left.length) {
      showError('Nothing was sent: decide ' + listOf(left.map(name)) + ' first.', true);
      focusQuestion(left[0]);
      return;
    }
  } else {
    const empty = emptyQuestions(answers);
    if (empty.length) {
      const send = await confirmEmpty(empty.map(name));
      if (state.open !== open || open.done) return;
      if (!send) {
        focusQuestion(empty[0]);
        return;
      }
    }
  }
  showError('', false);
  await settle('respond', { answers: collectAnswers($('questions'), open.bundle) });
}

export async function submitReject() {
  // Only from the open reject panel: a rejection is never sent unseen.
  if (!state.open || state.open.done || state.open.sending || !rejecting() || votingLocked(state.open.bundle)) return;
  const reason = /** @type {HTMLTextAreaElement} */ ($('reject-reason')).value;
  await settle('respond', { rejected: true, reject_reason: reason });
}

let cancelArmed = 0;
function resetCancel() {
  clearTimeout(cancelArmed);
  cancelArmed = 0;
  $('cancel-bundle').replaceChildren('Cancel', el('span', 'wide', ' request'));
}

export async function cancelBundle() {
  if (!state.open || state.open.done || state.open.sending || $('cancel-bundle').hidden) return;
  if (!cancelArmed) {
    // Two steps: cancelling ends the agent's wait for good.
    $('cancel-bundle').textContent = 'Click again to cancel it';
    toast('Cancelling ends the agent\u2019s wait for good: click Cancel again within 5 seconds.');
    cancelArmed = setTimeout(resetCancel, 5000);
    return;
  }
  resetCancel();
  await settle('cancel', {});
}

/**
 * UI-21: this page's own outcome, said as its own.
 * @param {BundleDetail} bundle
 * @param {string} status
 * @returns {string}
 */
function ownOutcome(bundle, status) {
  if (bundle.quorum && status !== 'cancelled') return 'Your vote was recorded; it completed the quorum (' + status + ').';
  if (status === 'rejected') return 'You rejected the request.';
  if (status === 'cancelled') return 'You cancelled the request.';
  return isPermission(bundle) ? 'Your decision was sent.' : 'Your answer was sent.';
}

/**
 * UI-6: the reply decides. `claimed: true` is ours, shown on the settled
 * panel as the caller's (UI-18); `claimed: false` shows the winner's
 * status and answers (never ours); 409 closes.
 * @param {'respond' | 'cancel'} action
 * @param {object} body
 */
async function settle(action, body) {
  const open = state.open;
  if (!open) return;
  const id = open.bundle.pending_id;
  const focused = document.activeElement;
  showError('', false);
  setSending(true);
  // UI-21: an event for it while the request travels is never "elsewhere".
  state.inFlight.add(id);
  /** @type {Reply<SettleReply>} */
  const reply = await request('POST', bundlePath(id, action), body);
  state.inFlight.delete(id);
  open.sending = false;
  // Closed (Escape) while it was sent: the outcome still reaches the
  // person, as a toast, and the list still follows it.
  const here = state.open === open;
  if (here) setSending(false);
  const claimed = reply.status === 200 ? reply.body.claimed : undefined;
  if (claimed === true) {
    state.mine.add(id);
    finish(id);
    const said = ownOutcome(open.bundle, reply.body.status);
    announce(said);
    if (here) showSettled(reply.body.status, reply.body.response, 'own', true, said);
    else toast(said);
  } else if (claimed === false && reply.body.status === 'pending') {
    // QUO-3, UI-6: this page's own vote, recorded; the quorum is not met.
    ownVote(open, here, reply.body.quorum, FORM);
  } else if (claimed === false) {
    finish(id);
    const said = 'Someone else answered first; their answer is shown.';
    announce(said);
    const note = 'Someone else settled it first; what you sent was not recorded.';
    if (here) showSettled(reply.body.status, reply.body.response, 'elsewhere', false, note);
    else toast(note + ' Open it from Answered to see who won.');
  } else if (reply.body.code === 'not_eligible' || reply.body.code === 'already_voted') {
    // QUO-3: refused, nothing recorded; the bundle says why (it locks).
    const note = refusal(reply.body.code);
    announce(note);
    if (here) {
      showError(note, false);
      refreshVotes(id, FORM);
    } else {
      toast(note);
    }
  } else if (reply.status === 410) {
    // LINK-3: a link answers once.
    finish(id);
    await showLinkUsed(open);
  } else if (reply.status === 409 || reply.status === 404) {
    finish(id);
    const note = reply.status === 409
      ? 'It is no longer active; nobody answered it.'
      : 'It no longer exists, or you can no longer see it.';
    announce(note);
    if (here) showClosed(note);
    else toast(note);
  } else if (reply.status !== 401) {
    const error = reply.status === 200
      ? 'The server sent an unexpected reply; nothing is known to be recorded.'
      : reply.body.error || 'The server answered ' + reply.status + '.';
    if (here) {
      showError(error, false);
      if (focused instanceof HTMLElement && document.activeElement === document.body) focused.focus();
    } else {
      toast(error);
    }
  }
}

/** @param {string} id */
function finish(id) {
  if (!state.settled.has(id)) state.settled.set(id, null);
  state.drafts.delete(id);
  removeFromList(id);
  refreshCount();
}

/** UI-18: from the settled panel, the next waiting bundle. */
export function openNext() {
  const open = state.open;
  const next = state.bundles.find((bundle) => !open || bundle.pending_id !== open.bundle.pending_id);
  // The next bundle's address takes this one's place, not the list's.
  closeAnswer(Boolean(next));
  if (next) {
    state.current = Math.max(0, state.bundles.indexOf(next));
    openBundle(next.pending_id);
  }
}

/**
 * Closing sends nothing: it never answers, rejects or cancels (UI-8).
 * @param {boolean} [routed] the address already moved (the back button).
 */
export function closeAnswer(routed = false) {
  saveDraft();
  // LINK-2: the one-bundle page has nothing to go back to.
  if (state.link) return;
  resetCancel();
  clearTimeout(countdownTimer);
  const from = state.open ? state.open.from : 'list';
  state.open = null;
  if (!routed) setRoute(from === 'history' ? '#/history' : '#/');
  show('inbox');
  if (from === 'history') showHistory();
  else showList();
}

/**
 * The reject (deny) panel open or closed; while open the bar sends the
 * rejection, and the answer's send steps aside (UI-17).
 * @param {boolean} rejecting
 */
function setRejecting(rejecting) {
  $('reject').hidden = !rejecting;
  $('reject-send').hidden = !rejecting;
  $('submit').hidden = rejecting;
  $('reject-open').setAttribute('aria-expanded', String(rejecting));
  if (state.open) {
    // On a phone "Back" alone, so the bar keeps one row (UI-17).
    if (rejecting) $('reject-open').replaceChildren('Back', el('span', 'wide', ' to answering'));
    else $('reject-open').textContent = isPermission(state.open.bundle) ? 'Deny\u2026' : 'Reject\u2026';
  }
  syncSend();
}

export function toggleReject() {
  const rejecting = $('reject').hidden;
  setRejecting(rejecting);
  if (rejecting) $('reject-reason').focus();
}

/** Whether the reject panel is open. */
export const rejecting = () => !$('reject').hidden;

/** Closes the reject panel (Escape), focus back on its opener. */
export function closeReject() {
  setRejecting(false);
  $('reject-open').focus();
}
