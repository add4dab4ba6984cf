// @ts-check
// The answer view (UI-4): a bundle's questions and options, drafts kept
// until sent, UI-7's limit at the input, reject and the two-step cancel,
// and the reply that decides what was recorded (UI-6).

import { bundlePath, request } from './api.js';
import { refreshAttempts, resetAttempts } from './attempts.js';
import { $, ageText, el, localTime, show, toast } from './dom.js';
import { focusInbox, refreshCount, removeBundle, renderList } from './list.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').Answer} Answer */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').EventData} EventData */
/** @typedef {import('./api.js').Response} Response */
/** @typedef {import('./api.js').SettleReply} SettleReply */

const limitMeta = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="clarion-text-limit"]'));
if (!limitMeta) throw new Error('inbox.html has no clarion-text-limit');
/** UI-7: VAL-5's limit in code points, as the server wrote it in. */
const LIMIT = Number(limitMeta.content);

/**
 * @param {string} text
 * @returns {number}
 */
const codePoints = (text) => Array.from(text).length;

/** @param {string} id */
export async function openBundle(id) {
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
  state.open = { bundle, done: false, sending: false, question: 0 };
  renderAnswer(bundle);
  resetAttempts(id);
  show('answer');
  window.scrollTo(0, 0);
  $('answer').focus({ preventScroll: true });
  // An event may have settled it while it was read (UI-6).
  const settledBy = state.settled.get(id);
  if (settledBy) {
    showSettledBy(settledBy.type, settledBy.data, 'It was settled elsewhere just as you opened it.');
  } else if (bundle.status !== 'pending') {
    if (bundle.response) {
      const byDeadline = bundle.response.decided_by === 'deadline';
      showSettled(bundle.status, bundle.response, byDeadline ? DEFAULT_GIVEN : 'It was settled before you opened it.');
    } else {
      showClosed('It is no longer active (' + bundle.status + ').');
    }
  }
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

/** @param {BundleDetail} bundle */
function renderAnswer(bundle) {
  const first = bundle.questions[0];
  $('answer-heading').textContent = bundle.questions.length === 1 && first
    ? first.title || 'Answer' : 'Answer ' + bundle.questions.length + ' questions';
  const meta = $('answer-meta');
  meta.replaceChildren(
    el('span', '', 'asked ' + ageText(bundle.age_seconds)),
    el('span', '', 'task ' + bundle.task_id),
    el('span', '', 'session ' + bundle.session_id));
  if (bundle.kind === 'permission') meta.prepend(el('span', 'chip permission', 'permission'));
  if (bundle.expires_at) meta.append(el('span', 'default', defaultSentence(bundle)));
  $('answer-context').textContent = bundle.context;
  $('answer-context').hidden = !bundle.context;
  const draft = state.drafts.get(bundle.pending_id);
  const questions = $('questions');
  questions.replaceChildren();
  bundle.questions.forEach((question, qIndex) => {
    const fieldset = el('fieldset', 'question');
    fieldset.dataset.index = String(qIndex);
    fieldset.append(el('legend', '', question.title || 'Question ' + (qIndex + 1)));
    if (question.prompt) fieldset.append(el('p', 'prompt', question.prompt));
    question.options.forEach((option, oIndex) => {
      const label = el('label', 'option');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.value = option.option_id;
      box.checked = Boolean(draft && draft.selected[qIndex] && draft.selected[qIndex].includes(option.option_id));
      const n = el('span', 'n', oIndex < 9 ? String(oIndex + 1) : '');
      n.setAttribute('aria-hidden', 'true');
      const text = el('span', 'text');
      text.append(el('span', 'label', option.label));
      if (option.description) text.append(el('span', 'description', option.description));
      label.append(box, n, text);
      fieldset.append(label);
    });
    const textId = 'text-' + qIndex;
    const textLabel = el('label', '', question.options.length ? 'Something else (optional)' : 'Your answer');
    textLabel.htmlFor = textId;
    const area = document.createElement('textarea');
    area.id = textId;
    area.rows = 2;
    area.className = 'custom-text';
    area.value = draft ? draft.texts[qIndex] || '' : '';
    const counter = el('p', 'counter');
    const count = el('span', '', '');
    count.id = textId + '-count';
    const limit = el('span', 'error', '');
    limit.id = textId + '-limit';
    limit.setAttribute('role', 'alert');
    counter.append(count, limit);
    area.setAttribute('aria-describedby', count.id + ' ' + limit.id);
    fieldset.append(textLabel, area, counter);
    limitText(area, count, limit);
    fieldset.addEventListener('focusin', () => setQuestion(qIndex, false));
    questions.append(fieldset);
  });
  const reason = /** @type {HTMLTextAreaElement} */ ($('reject-reason'));
  reason.value = draft ? draft.reason : '';
  reason.dispatchEvent(new Event('input'));
  $('reject').hidden = !(draft && draft.rejecting);
  $('answer-error').textContent = '';
  $('answer-form').hidden = false;
  $('settled').hidden = true;
  setSending(false);
  resetCancel();
  setQuestion(0, false);
}

/**
 * @param {number} index clamped to the questions.
 * @param {boolean} focus
 */
export function setQuestion(index, focus) {
  const fieldsets = $('questions').querySelectorAll('fieldset.question');
  if (!fieldsets.length || !state.open) return;
  const next = Math.max(0, Math.min(index, fieldsets.length - 1));
  state.open.question = next;
  fieldsets.forEach((fieldset, i) => fieldset.classList.toggle('current', i === next));
  if (focus) {
    const target = /** @type {HTMLInputElement | HTMLTextAreaElement | null} */ (fieldsets[next].querySelector('input, textarea'));
    if (target) target.focus();
    fieldsets[next].scrollIntoView({ block: 'nearest' });
  }
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

/** @returns {Answer[]} what the form holds, one per question. */
function collectAnswers() {
  const open = state.open;
  if (!open) return [];
  const fieldsets = $('questions').querySelectorAll('fieldset.question');
  return open.bundle.questions.map((question, index) => {
    const fieldset = fieldsets[index];
    const boxes = /** @type {NodeListOf<HTMLInputElement>} */ (fieldset.querySelectorAll('input[type=checkbox]:checked'));
    const selected = Array.from(boxes).map((box) => box.value);
    const area = fieldset.querySelector('textarea');
    return {
      question_id: question.question_id,
      selected_options: selected,
      custom_text: area ? area.value : '',
    };
  });
}

function saveDraft() {
  const open = state.open;
  if (!open || open.done) return;
  const answers = collectAnswers();
  state.drafts.set(open.bundle.pending_id, {
    selected: answers.map((answer) => answer.selected_options),
    texts: answers.map((answer) => answer.custom_text),
    reason: /** @type {HTMLTextAreaElement} */ ($('reject-reason')).value,
    rejecting: !$('reject').hidden,
  });
}

/** @param {boolean} sending */
function setSending(sending) {
  for (const id of ['submit', 'reject-open', 'reject-send', 'cancel-bundle']) {
    /** @type {HTMLButtonElement} */ ($(id)).disabled = sending;
  }
  if (state.open) state.open.sending = sending;
}

export async function submitAnswer() {
  if (!state.open || state.open.done || state.open.sending) return;
  await settle('respond', { answers: collectAnswers() });
}

export async function submitReject() {
  if (!state.open || state.open.done || state.open.sending) return;
  const reason = /** @type {HTMLTextAreaElement} */ ($('reject-reason')).value;
  await settle('respond', { rejected: true, reject_reason: reason });
}

let cancelArmed = 0;
function resetCancel() {
  clearTimeout(cancelArmed);
  cancelArmed = 0;
  $('cancel-bundle').textContent = 'Cancel request';
}

export async function cancelBundle() {
  if (!state.open || state.open.done || state.open.sending) return;
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
 * UI-6: the reply decides. `claimed: true` is ours; `claimed: false`
 * shows the winner's status and answers (never ours); 409 closes.
 * @param {'respond' | 'cancel'} action
 * @param {object} body
 */
async function settle(action, body) {
  const open = state.open;
  if (!open) return;
  const id = open.bundle.pending_id;
  const focused = document.activeElement;
  $('answer-error').textContent = '';
  setSending(true);
  /** @type {Reply<SettleReply>} */
  const reply = await request('POST', bundlePath(id, action), body);
  open.sending = false;
  // Closed (Escape) while it was sent: the outcome still reaches the
  // person, as a toast, and the list still follows it.
  const here = state.open === open;
  if (here) setSending(false);
  const claimed = reply.status === 200 ? reply.body.claimed : undefined;
  const lostNote = 'Someone else settled it first; what you sent was not recorded.';
  if (claimed === true) {
    finish(id);
    const sent = reply.body.status === 'answered' ? 'Answer sent.' : 'Request ' + reply.body.status + '.';
    if (here) closeAnswer();
    toast(sent);
  } else if (claimed === false) {
    finish(id);
    if (here) showSettled(reply.body.status, reply.body.response, lostNote);
    else toast(lostNote + ' Open requests show who won.');
  } else if (reply.status === 409 || reply.status === 404) {
    finish(id);
    const note = reply.status === 409
      ? 'It is no longer active; nobody answered it.'
      : 'It no longer exists, or you can no longer see it.';
    if (here) showClosed(note);
    else toast(note);
  } else if (reply.status !== 401) {
    const error = reply.status === 200
      ? 'The server sent an unexpected reply; nothing is known to be recorded.'
      : reply.body.error || 'The server answered ' + reply.status + '.';
    if (here) {
      $('answer-error').textContent = error;
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
  if (type === 'bundle.resolved') {
    // UI-11: a default given at the deadline says so, not "elsewhere".
    const byDeadline = data.response && data.response.decided_by === 'deadline';
    showSettled(data.status, data.response, byDeadline ? DEFAULT_GIVEN : note);
  } else if (data.reason === 'deadline') {
    showClosed('Nobody answered in time: the question was withdrawn at its deadline.');
  } else {
    showClosed('It is no longer active (' + (data.reason || 'closed') + ').');
  }
}

/** UI-11: the note of a bundle its deadline settled. */
const DEFAULT_GIVEN = 'Nobody answered in time: the agent was given the default at the deadline.';

/** @type {Record<string, string>} */
const OUTCOME = {
  answered: 'Already answered',
  rejected: 'Already rejected',
  cancelled: 'Already cancelled',
};

/**
 * The winner's status and answers, shown as text.
 * @param {string | undefined} status
 * @param {Response | null | undefined} response
 * @param {string} note
 */
function showSettled(status, response, note) {
  const open = state.open;
  if (!open) return;
  open.done = true;
  $('answer-form').hidden = true;
  const byDeadline = Boolean(response && response.decided_by === 'deadline');
  $('settled-heading').textContent = byDeadline
    ? (status === 'rejected' ? 'Rejected' : 'Answered') + ' by its deadline'
    : (status && OUTCOME[status]) || 'Settled: ' + status;
  $('settled-note').textContent = note;
  const list = $('settled-answers');
  list.replaceChildren();
  const answers = response && Array.isArray(response.answers) ? response.answers : [];
  if (status === 'rejected' && response) {
    list.append(el('dt', '', 'Reason'), el('dd', '', response.reject_reason || '(none given)'));
  } else {
    for (const answer of answers) {
      if (!answer || !Array.isArray(answer.selected_options)) continue;
      const question = open.bundle.questions.find((q) => q.question_id === answer.question_id);
      list.append(el('dt', '', question ? question.title || question.prompt : answer.question_id));
      const labels = answer.selected_options.map((optionId) => {
        const option = question && question.options.find((o) => o.option_id === optionId);
        return option ? option.label : optionId;
      });
      const parts = [];
      if (labels.length) parts.push(labels.join(', '));
      if (answer.custom_text) parts.push(answer.custom_text);
      const dd = el('dd', 'winner-answer', parts.length ? parts.join('\n') : '(no answer)');
      list.append(dd);
    }
  }
  $('settled').hidden = false;
  $('settled').focus();
  refreshAttempts();
}

/** @param {string} note */
function showClosed(note) {
  const open = state.open;
  if (!open) return;
  open.done = true;
  $('answer-form').hidden = true;
  $('settled-heading').textContent = 'No longer active';
  $('settled-note').textContent = note;
  $('settled-answers').replaceChildren();
  $('settled').hidden = false;
  $('settled').focus();
  refreshAttempts();
}

/** Closing sends nothing: it never answers, rejects or cancels (UI-8). */
export function closeAnswer() {
  saveDraft();
  resetCancel();
  state.open = null;
  show('inbox');
  renderList();
  focusInbox();
}

export function toggleReject() {
  const reject = $('reject');
  reject.hidden = !reject.hidden;
  if (!reject.hidden) $('reject-reason').focus();
}
