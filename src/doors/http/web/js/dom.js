// @ts-check
// Helpers for the page's elements. Everything agent-written is set as
// text nodes, never as markup (UI-1), through textNodes, which shows its
// hidden characters (PROD-7).

import { absoluteTime, shownPieces } from './format.js';

/**
 * The page's element with this id; inbox.html has every id the script
 * names.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function $(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error('inbox.html has no #' + id);
  return node;
}

/**
 * PROD-7: the nodes that show `text`: text nodes (UI-1), each
 * bidirectional or zero-width control character a visible marker
 * (`⟨U+202E⟩`, its name in the title) so it cannot reorder or hide what
 * is around it. Every agent- or user-written text goes into the page
 * through here.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function textNodes(text) {
  const fragment = document.createDocumentFragment();
  for (const piece of shownPieces(text)) {
    if (!piece.hidden) {
      fragment.append(document.createTextNode(piece.text));
      continue;
    }
    const marker = document.createElement('span');
    marker.className = 'hidden-char';
    marker.title = 'A hidden character: ' + piece.hidden;
    marker.textContent = piece.text;
    fragment.append(marker);
  }
  return fragment;
}

/**
 * Sets an element's text (through {@link textNodes}).
 * @param {Element} node
 * @param {string} text
 */
export function setText(node, text) {
  node.replaceChildren(textNodes(text));
}

/**
 * A new element, its text set as text (UI-1, PROD-7).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.append(textNodes(text));
  return node;
}

/**
 * UI-19: a `<time>` showing `text` (a relative time, say) with the
 * absolute local date and time on hover (its title) and for assistive
 * technology (read after the text). {@link setTimeText} changes the text.
 * @param {string} iso RFC 3339.
 * @param {string} text
 * @returns {HTMLTimeElement}
 */
export function timeEl(iso, text) {
  const time = document.createElement('time');
  time.dateTime = iso;
  const absolute = absoluteTime(iso);
  time.title = absolute;
  time.append(el('span', 'shown', text));
  if (text !== absolute) time.append(el('span', 'visually-hidden', ' (' + absolute + ')'));
  return time;
}

/**
 * @param {Element | null} time made by {@link timeEl}.
 * @param {string} text
 */
export function setTimeText(time, text) {
  const shown = time && time.querySelector('.shown');
  if (shown && shown.textContent !== text) shown.textContent = text;
}

let toastTimer = 0;
/** @param {string} text */
export function toast(text) {
  setText($('toast'), text);
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { $('toast').textContent = ''; }, 5000);
}

/**
 * Shows one of the page's sections and hides the others.
 * @param {'loading' | 'sign-in' | 'inbox' | 'answer'} section
 */
export function show(section) {
  for (const id of ['loading', 'sign-in', 'inbox', 'answer']) $(id).hidden = id !== section;
}

/** @param {string} text */
export function announce(text) {
  setText($('announce'), text);
}
