// @ts-check
// The answer view (UI-4, UI-13..18): a bundle's questions, drafts kept
// until sent, UI-7's limit at the input; sending through the confirmation
// of empty questions (UI-13) or, for a permission request, only once every
// question is decided (UI-15); reject (deny) and the two-step cancel, each
// saying what the agent is told (UI-16); and the reply that decides what
// was recorded (UI-6), shown on the settled panel (UI-18).

import { bundlePath, request } from './api.js';
import { refreshAttempts, resetAttempts } from './attempts.js';
import { confirmEmpty } from './confirm.js';
import { $, ageText, announce, el, localTime, show, timeEl, toast } from './dom.js';
import { focusInbox, refreshCount, removeBundle, renderList } from './list.js';
import { renderMarkdown } from './markdown.js';
import { collectAnswers, emptyQuestions, fieldsets, listOf, questionName, renderQuestions, toggleDigit, undecided } from './questions.js';
import { renderClosed, renderSettled } from './settled.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').EventData} EventData */
/** @typedef {import('./api.js').Response} Response */
/** @typedef {import('./api.js').SettleReply} SettleReply */
/** @typedef {import('./state.js').OpenBundle} OpenBundle */

const limitMeta = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="clarion-text-limit"]'));
if (!limitMeta) throw new Error('inbox.html has no clarion-text-limit');
/** UI-7: VAL-5's limit in code points, as the server wrote it in. */
const LIMIT = Number(limitMeta.content);

/**
 * @param {string} text
 * @returns {number}
 */
const codePoints = (text) => Array.from(text).length;

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
  if (reply.status === 404) {
    state.settled.set(id, null);
    removeBundle(id);
    toast('That request is gone, or you can no longer see it.');
    return;
  }
  const bundle = reply.body;
  if (reply.status !== 200 || typeof bundle.pending_id !== 'string' || !Array.isArray(bundle.questions)) {
    if (reply.status !== 401) toast('Could not open it: ' + (reply.body.error || 'status ' + reply.status));
    return;
  }
  state.open = { bundle, done: false, sending: false, question: 0, from: origin };
  renderAnswer(bundle);
  resetAttempts(id);
  show('answer');
  window.scrollTo(0, 0);
  $('answer').focus({ preventScroll: true });
  // An event may have settled it while it was read (UI-6).
  const settledBy = state.settled.get(id);
  if (settledBy && bundle.status === 'pending') {
    showSettledBy(settledBy.type, settledBy.data, 'It was settled elsewhere just as you opened it.');
  } else if (bundle.status !== 'pending') {
    if (bundle.response) {
      const note = origin === 'history' || bundle.response.decided_by === 'deadline'
        ? defaultNote(bundle.response)
        : 'It was settled before you opened it.';
      showSettled(bundle.status, bundle.response, origin === 'history' ? 'history' : 'elsewhere',
        bundle.decided_by_caller === true, note);
    } else {
      showClosed('It is no longer active (' + bundle.status + ').');
    }
  }
}

/**
 * The note of a bundle settled before it was opened: a deadline's default
 * says so (UI-11).
 * @param {Response} response
 * @returns {string}
 */
function defaultNote(response) {
  return response.decided_by === 'deadline' ? DEFAULT_GIVEN : '';
}

/**
 * UI-11: what happens if nobody answers in time, in the browser's time.
 * @param {BundleDetail} bundle
 * @returns {string}
 */
export function defaultSentence(bundle) {
  const by = 'If nobody answers by ' + localTime(bundle.expires_at) + ', ';
  const given = bundle.default_response;
  if (bundle.on_expire === 'reject' && given) {
    return by + 'the agent is told: Reject' + (given.reject_reason ? ' \u2014 ' + given.reject_reason : '') + '.';
  }
  if (bundle.on_expire === 'answer' && given) {
    const parts = given.answers.map((answer) => {
      const question = bundle.questions.find((q) => q.question_id === answer.question_id);
      const labels = answer.selected_options.map((id) => {
        const option = question && question.options.find((o) => o.option_id === id);
        return option ? option.label : id;
      });
      const text = [labels.join(', '), answer.custom_text].filter(Boolean).join(' \u2014 ');
      return (question && question.title ? question.title + ': ' : '') + (text || 'no answer');
    });
    return by + 'the agent is told: ' + parts.join('; ') + '.';
  }
  return by + 'the question is withdrawn.';
}

/**
 * The heading: a permission request says it is one (UI-15).
 * @param {BundleDetail} bundle
 * @returns {string}
 */
function headingOf(bundle) {
  const first = bundle.questions[0];
  const single = bundle.questions.length === 1 && first ? first.title || '' : '';
  if (isPermission(bundle)) return 'Permission requested' + (single ? ': ' + single : '');
  return single || (bundle.questions.length === 1 ? 'Answer' : 'Answer ' + bundle.questions.length + ' questions');
}

/** @param {BundleDetail} bundle */
function renderAnswer(bundle) {
  $('answer-heading').textContent = headingOf(bundle);
  const meta = $('answer-meta');
  const task = bundle.task_title || bundle.task_id;
  const workspace = bundle.workspace_name || bundle.workspace_id;
  const asked = el('span', 'asked', 'asked ');
  asked.append(timeEl(bundle.created_at, ageText(bundle.age_seconds)));
  meta.replaceChildren(asked);
  if (task) meta.append(el('span', 'task', 'Task: ' + task));
  if (workspace) meta.append(el('span', 'workspace', 'Workspace: ' + workspace));
  if (isPermission(bundle)) meta.prepend(el('span', 'chip permission', 'Permission request'));
  if (bundle.expires_at) meta.append(el('span', 'default', defaultSentence(bundle)));
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
}

/** UI-15: "Send decision" waits until every question is decided. */
export function syncSend() {
  const open = state.open;
  if (!open || open.done) return;
  const blocked = isPermission(open.bundle) && undecided(collectAnswers($('questions'), open.bundle)).length > 0;
  // "Decide … first" is over once everything is decided.
  if (!blocked && $('answer-error').dataset.undecided) showError('', false);
  const submit = /** @type {HTMLButtonElement} */ ($('submit'));
  submit.disabled = open.sending || blocked;
  submit.setAttribute('aria-describedby', blocked ? 'submit-help' : '');
  $('submit-help').hidden = !blocked;
}

/**
 * Says why nothing was sent, or clears it.
 * @param {string} text
 * @param {boolean} undecided it asks for the undecided questions (UI-15),
 *   so it goes once they are decided.
 */
function showError(text, undecided) {
  const error = $('answer-error');
  error.textContent = text;
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
  if (!open || open.done) return false;
  const fieldset = fieldsets($('questions'))[open.question];
  const control = fieldset ? toggleDigit(fieldset, n) : null;
  if (!control) return false;
  control.focus();
  syncSend();
  return true;
}

/**
 * UI-7: at most LIMIT code points, counted on the value; an input
 * that would pass it is refused whole, with a message, never cut.
 * @param {HTMLTextAreaElement} area
 * @param {HTMLElement} count shows `n / LIMIT`.
 * @param {HTMLElement} message says why an input was refused.
 */
export function limitText(area, count, message) {
  let accepted = area.value;
  const update = () => {
    const n = codePoints(area.value);
    count.textContent = n + ' / ' + LIMIT;
    if (n === LIMIT && !message.dataset.refused) {
      message.textContent = 'That is the limit: ' + LIMIT + ' characters.';
    } else if (n < LIMIT) {
      message.textContent = '';
    }
    delete message.dataset.refused;
  };
  /** @param {number} wouldBe */
  const refuse = (wouldBe) => {
    message.dataset.refused = '1';
    message.textContent = 'At most ' + LIMIT + ' characters: that input was not added (it would make ' + wouldBe + ').';
  };
  area.addEventListener('beforeinput', (event) => {
    if (event.isComposing || !event.inputType.startsWith('insert')) return;
    let data = event.data;
    if (data === null && event.dataTransfer) data = event.dataTransfer.getData('text/plain');
    if (data === null) return; // the input event below still checks
    const value = area.value;
    const kept = codePoints(value.slice(0, area.selectionStart)) + codePoints(value.slice(area.selectionEnd));
    const wouldBe = kept + codePoints(data);
    if (wouldBe > LIMIT) {
      event.preventDefault();
      refuse(wouldBe);
      count.textContent = codePoints(value) + ' / ' + LIMIT;
    }
  });
  /** @param {Event} [event] */
  const check = (event) => {
    if (event instanceof InputEvent && event.isComposing) return;
    const n = codePoints(area.value);
    if (n > LIMIT) {
      const caret = Math.max(0, area.selectionStart - (area.value.length - accepted.length));
      area.value = accepted;
      area.setSelectionRange(caret, caret);
      refuse(n);
      count.textContent = codePoints(area.value) + ' / ' + LIMIT;
      return;
    }
    accepted = area.value;
    update();
  };
  area.addEventListener('input', check);
  area.addEventListener('compositionend', () => check());
  update();
}

function saveDraft() {
  const open = state.open;
  if (!open || open.done) return;
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
  if (!open || open.done || open.sending) return;
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
  if (!state.open || state.open.done || state.open.sending || !rejecting()) return;
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
  } else if (claimed === false) {
    finish(id);
    const said = 'Someone else answered first; their answer is shown.';
    announce(said);
    const note = 'Someone else settled it first; what you sent was not recorded.';
    if (here) showSettled(reply.body.status, reply.body.response, 'elsewhere', false, note);
    else toast(note + ' Open it from Answered to see who won.');
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
  removeBundle(id);
  refreshCount();
}

/**
 * The settled view for a `bundle.resolved` or `bundle.closed` event.
 * @param {string} type
 * @param {EventData} data
 * @param {string} note
 */
export function showSettledBy(type, data, note) {
  if (type === 'bundle.resolved' && data.response && data.status) {
    const open = state.open;
    const mine = Boolean(open && state.mine.has(open.bundle.pending_id));
    // UI-11: a default given at the deadline says so, not "elsewhere".
    const byDeadline = data.response.decided_by === 'deadline';
    showSettled(data.status, data.response, mine ? 'own' : 'elsewhere', mine, byDeadline ? DEFAULT_GIVEN : note);
  } else if (data.reason === 'deadline') {
    showClosed('Nobody answered in time: the question was withdrawn at its deadline.');
  } else {
    showClosed('It is no longer active (' + (data.reason || 'closed') + ').');
  }
}

/** UI-11: the note of a bundle its deadline settled. */
const DEFAULT_GIVEN = 'Nobody answered in time: the agent was given the default at the deadline.';

/**
 * UI-18: the settled panel, alone: what, who, when, and the way on.
 * @param {string} status
 * @param {Response} response
 * @param {'own' | 'elsewhere' | 'history'} how
 * @param {boolean} mine
 * @param {string} note
 */
function showSettled(status, response, how, mine, note) {
  const open = state.open;
  if (!open) return;
  open.done = true;
  $('answer-form').hidden = true;
  renderSettled(open.bundle, status, response, { how, mine, note });
  showPanel(open);
}

/** @param {string} note */
function showClosed(note) {
  const open = state.open;
  if (!open) return;
  open.done = true;
  $('answer-form').hidden = true;
  renderClosed(note);
  showPanel(open);
}

/**
 * Shows the panel with its ways on: the next waiting bundle, and back
 * to the view it was opened from.
 * @param {OpenBundle} open
 */
function showPanel(open) {
  const next = state.bundles.find((bundle) => bundle.pending_id !== open.bundle.pending_id);
  $('settled-next').hidden = !next;
  $('settled-close').textContent = open.from === 'history' ? 'Back to Answered' : 'Back to inbox';
  $('settled').hidden = false;
  $('settled').focus();
  refreshAttempts();
}

/** UI-18: from the settled panel, the next waiting bundle. */
export function openNext() {
  const open = state.open;
  const next = state.bundles.find((bundle) => !open || bundle.pending_id !== open.bundle.pending_id);
  closeAnswer();
  if (next) {
    state.current = Math.max(0, state.bundles.indexOf(next));
    openBundle(next.pending_id);
  }
}

/** Closing sends nothing: it never answers, rejects or cancels (UI-8). */
export function closeAnswer() {
  saveDraft();
  resetCancel();
  const from = state.open ? state.open.from : 'list';
  state.open = null;
  show('inbox');
  renderList();
  if (from === 'history') document.dispatchEvent(new CustomEvent('clarion:back-to-history'));
  else focusInbox();
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
    $('reject-open').textContent = rejecting
      ? 'Back to answering'
      : isPermission(state.open.bundle) ? 'Deny\u2026' : 'Reject\u2026';
  }
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
