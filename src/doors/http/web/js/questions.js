// @ts-check
// The questions of the answer view (UI-4, UI-14, UI-15): checkboxes where
// several options may be chosen, radio buttons with "Clear choice" where
// one, decision buttons in a permission request; what the form holds;
// which questions are still empty or undecided.

import { el } from './dom.js';
import { questionName, shown } from './format.js';
import { renderMarkdown } from './markdown.js';

/** @typedef {import('./api.js').Answer} Answer */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').Question} Question */
/** @typedef {import('./state.js').Draft} Draft */

/**
 * How a question is answered.
 * @typedef {'several' | 'one' | 'decision'} Style
 */

/**
 * @param {BundleDetail} bundle
 * @param {Question} question
 * @returns {Style}
 */
function styleOf(bundle, question) {
  if (bundle.kind === 'permission') return 'decision';
  // ASK-6: only an explicit false is single-select.
  return question.multi_select === false ? 'one' : 'several';
}

/**
 * The fieldsets of the questions, in order.
 * @param {HTMLElement} container
 * @returns {HTMLFieldSetElement[]}
 */
export function fieldsets(container) {
  return Array.from(container.querySelectorAll('fieldset.question'));
}

/**
 * The choice controls of one question, in option order.
 * @param {HTMLFieldSetElement} fieldset
 * @returns {(HTMLInputElement | HTMLButtonElement)[]}
 */
function choices(fieldset) {
  return Array.from(fieldset.querySelectorAll('input.choice, button.decision'));
}

/**
 * Whether a choice control is chosen.
 * @param {HTMLInputElement | HTMLButtonElement} control
 * @returns {boolean}
 */
const chosen = (control) => control instanceof HTMLInputElement
  ? control.checked
  : control.getAttribute('aria-pressed') === 'true';

/**
 * Chooses or unchooses a control, keeping a single-select question to
 * one choice (UI-14, UI-15).
 * @param {HTMLFieldSetElement} fieldset
 * @param {HTMLInputElement | HTMLButtonElement} control
 * @param {boolean} on
 */
function choose(fieldset, control, on) {
  const exclusive = fieldset.dataset.style === 'one' || fieldset.dataset.exclusive === 'true';
  if (on && exclusive) {
    for (const other of choices(fieldset)) if (other !== control) setChosen(other, false);
  }
  setChosen(control, on);
  fieldset.dispatchEvent(new Event('change', { bubbles: true }));
}

/**
 * @param {HTMLInputElement | HTMLButtonElement} control
 * @param {boolean} on
 */
function setChosen(control, on) {
  if (control instanceof HTMLInputElement) control.checked = on;
  else control.setAttribute('aria-pressed', String(on));
}

/**
 * The controls of one option: a checkbox, a radio button or a decision
 * button, with the option's label and its description (Markdown).
 * @param {Style} style
 * @param {string} group the radio group's name.
 * @param {import('./api.js').Option} option
 * @param {number} index
 * @param {boolean} on
 * @returns {HTMLElement}
 */
function optionControl(style, group, option, index, on) {
  const hint = el('span', 'n', index < 9 ? String(index + 1) : '');
  hint.setAttribute('aria-hidden', 'true');
  const text = el('span', 'text');
  text.append(el('span', 'label', option.label));
  if (option.description) {
    const description = el('span', 'description');
    description.append(renderMarkdown(option.description));
    text.append(description);
  }
  if (style === 'decision') {
    const button = el('button', 'decision choice-button');
    button.type = 'button';
    button.classList.add('decision');
    button.dataset.value = option.option_id;
    button.setAttribute('aria-pressed', String(on));
    button.append(hint, text);
    return button;
  }
  const label = el('label', 'option');
  const input = document.createElement('input');
  input.type = style === 'one' ? 'radio' : 'checkbox';
  input.className = 'choice';
  if (style === 'one') input.name = group;
  input.value = option.option_id;
  input.checked = on;
  label.append(input, hint, text);
  return label;
}

/**
 * Renders the bundle's questions into `container`, with a draft's
 * choices and texts restored.
 * @param {HTMLElement} container
 * @param {BundleDetail} bundle
 * @param {Draft | undefined} draft
 * @param {(index: number) => void} onFocus called when a question gets focus.
 * @param {(area: HTMLTextAreaElement, count: HTMLElement, limit: HTMLElement) => void} limitText UI-7.
 */
export function renderQuestions(container, bundle, draft, onFocus, limitText) {
  container.replaceChildren();
  bundle.questions.forEach((question, qIndex) => {
    const style = styleOf(bundle, question);
    const fieldset = el('fieldset', 'question');
    fieldset.dataset.index = String(qIndex);
    fieldset.dataset.style = style;
    fieldset.dataset.exclusive = String(question.multi_select === false);
    fieldset.append(el('legend', '', questionName(question, qIndex)));
    if (question.prompt) {
      const prompt = el('div', 'prompt');
      prompt.append(renderMarkdown(question.prompt));
      fieldset.append(prompt);
    }
    const picked = (draft && draft.selected[qIndex]) || [];
    const group = 'choice-' + qIndex;
    const options = el('div', style === 'decision' ? 'decisions' : 'options');
    if (style === 'one') options.setAttribute('role', 'radiogroup');
    if (style !== 'several') options.setAttribute('aria-label', shown(questionName(question, qIndex)));
    question.options.forEach((option, oIndex) => {
      options.append(optionControl(style, group, option, oIndex, picked.includes(option.option_id)));
    });
    fieldset.append(options);
    if (!question.options.length && style === 'decision') {
      // UI-15, DM-1: nothing to decide here; deny and cancel remain.
      fieldset.append(el('p', 'error undecidable',
        'This question has no options to choose from, so it cannot be decided: deny or cancel the request.'));
    }
    if (style === 'one') {
      const clear = el('button', 'quiet clear-choice', 'Clear choice');
      clear.type = 'button';
      clear.setAttribute('aria-label', shown('Clear the choice of ' + questionName(question, qIndex)));
      clear.addEventListener('click', () => {
        for (const control of choices(fieldset)) setChosen(control, false);
        fieldset.dispatchEvent(new Event('change', { bubbles: true }));
      });
      fieldset.append(clear);
    }
    for (const control of choices(fieldset)) {
      if (control instanceof HTMLButtonElement) {
        control.addEventListener('click', () => choose(fieldset, control, !chosen(control)));
      }
    }
    fieldset.addEventListener('change', () => syncClear(fieldset));
    syncClear(fieldset);
    const textId = 'text-' + qIndex;
    const textLabel = el('label', '', style === 'decision'
      ? 'Note for the agent (optional)'
      : question.options.length ? 'Something else (optional)' : 'Your answer');
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
    fieldset.addEventListener('focusin', () => onFocus(qIndex));
    container.append(fieldset);
  });
}

/**
 * "Clear choice" is there to use only when something is chosen.
 * @param {HTMLFieldSetElement} fieldset
 */
function syncClear(fieldset) {
  const clear = /** @type {HTMLButtonElement | null} */ (fieldset.querySelector('button.clear-choice'));
  if (clear) clear.disabled = !choices(fieldset).some(chosen);
}

/**
 * UI-8 with UI-14 and UI-15: the digit `n` (1-based) toggles the n-th
 * option of the question; on a single-select question it chooses that
 * option alone, and on the chosen one it clears the choice.
 * @param {HTMLFieldSetElement} fieldset
 * @param {number} n
 * @returns {HTMLElement | null} the control toggled, or null.
 */
export function toggleDigit(fieldset, n) {
  const control = choices(fieldset)[n - 1];
  if (!control) return null;
  choose(fieldset, control, !chosen(control));
  return control;
}

/**
 * What the form holds, one answer per question: never more than one
 * option for a single-select question (UI-14).
 * @param {HTMLElement} container
 * @param {BundleDetail} bundle
 * @returns {Answer[]}
 */
export function collectAnswers(container, bundle) {
  const sets = fieldsets(container);
  return bundle.questions.map((question, index) => {
    const fieldset = sets[index];
    const selected = fieldset
      ? choices(fieldset).filter(chosen).map((control) =>
        control instanceof HTMLInputElement ? control.value : control.dataset.value || '')
      : [];
    const area = fieldset ? fieldset.querySelector('textarea') : null;
    return {
      question_id: question.question_id,
      selected_options: question.multi_select === false ? selected.slice(0, 1) : selected,
      custom_text: area ? area.value : '',
    };
  });
}

/**
 * UI-13: the questions with no choice and no text (indexes).
 * @param {Answer[]} answers
 * @returns {number[]}
 */
export function emptyQuestions(answers) {
  return answers
    .map((answer, index) => (answer.selected_options.length || answer.custom_text.trim() ? -1 : index))
    .filter((index) => index >= 0);
}

/**
 * UI-15: the questions of a permission request without a chosen option.
 * @param {Answer[]} answers
 * @returns {number[]}
 */
export function undecided(answers) {
  return answers
    .map((answer, index) => (answer.selected_options.length ? -1 : index))
    .filter((index) => index >= 0);
}

/**
 * QUO-8: the form set to `answers` exactly — each question's chosen
 * options and its text, nothing else kept — so a copied vote has the same
 * digest (AUD-5) as the one it copies.
 * @param {HTMLElement} container
 * @param {BundleDetail} bundle
 * @param {Answer[]} answers
 */
export function fillAnswers(container, bundle, answers) {
  const sets = fieldsets(container);
  bundle.questions.forEach((question, index) => {
    const fieldset = sets[index];
    if (!fieldset) return;
    const answer = answers.find((a) => a && a.question_id === question.question_id);
    const picked = answer && Array.isArray(answer.selected_options) ? answer.selected_options : [];
    for (const control of choices(fieldset)) {
      const value = control instanceof HTMLInputElement ? control.value : control.dataset.value || '';
      setChosen(control, picked.includes(value));
    }
    const area = fieldset.querySelector('textarea');
    if (area) {
      area.value = answer ? answer.custom_text : '';
      // UI-7: the counter follows.
      area.dispatchEvent(new Event('input'));
    }
    fieldset.dispatchEvent(new Event('change', { bubbles: true }));
  });
}
