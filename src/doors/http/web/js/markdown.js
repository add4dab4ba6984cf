// @ts-check
// The safe Markdown subset of UI-19, for prompts, option descriptions
// and context: paragraphs and line breaks, fenced code blocks, code
// spans, emphasis (`*`, `_`, `**`, `__`), bullet and numbered lists one
// level deep, and links whose URL is http or https. Everything is built
// as DOM nodes from text and attributes, never from HTML strings;
// anything else (raw HTML, headings, images, other links) stays literal
// text. One pass over the lines, and inline closers found through tables
// of next occurrences, so rendering takes time linear in the text.
// Text goes in through textNodes, which shows hidden characters
// (PROD-7), and a link whose text looks like an address other than its
// own shows where it really goes.

import { textNodes } from './dom.js';
import { withoutHidden } from './format.js';

/** A fenced code block's fence. */
const FENCE = /^ {0,3}```/;
/** A bullet item: `-`, `*` or `+`, then a space. */
const BULLET = /^ {0,3}[-*+] +(.*)$/;
/** A numbered item: digits, `.` or `)`, then a space. */
const NUMBERED = /^ {0,3}(\d{1,9})[.)] +(.*)$/;
/** A link's URL: http or https, no spaces, nothing that could break out. */
const WEB_URL = /^https?:\/\/[^\s<>"'`]+$/i;

/**
 * The nodes of `text` rendered as UI-19's Markdown subset.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text) {
  const fragment = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  /** @type {string[]} */
  let paragraph = [];
  /** @type {HTMLUListElement | HTMLOListElement | null} */
  let list = null;
  const endParagraph = () => {
    if (!paragraph.length) return;
    const p = document.createElement('p');
    paragraph.forEach((line, index) => {
      if (index) p.append(document.createElement('br'));
      p.append(inline(line));
    });
    fragment.append(p);
    paragraph = [];
  };
  const endList = () => { list = null; };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    if (FENCE.test(line)) {
      endParagraph();
      endList();
      const code = [];
      index++;
      while (index < lines.length && !FENCE.test(lines[index])) code.push(lines[index++]);
      const pre = document.createElement('pre');
      const element = document.createElement('code');
      element.append(textNodes(code.join('\n')));
      pre.append(element);
      fragment.append(pre);
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      endParagraph();
      const tag = bullet ? 'UL' : 'OL';
      if (!list || list.tagName !== tag) {
        list = bullet ? document.createElement('ul') : document.createElement('ol');
        if (numbered && numbered[1] !== '1') list.setAttribute('start', String(Number(numbered[1])));
        fragment.append(list);
      }
      const item = document.createElement('li');
      item.append(inline(bullet ? bullet[1] : numbered ? numbered[2] : ''));
      list.append(item);
      continue;
    }
    if (!line.trim()) {
      endParagraph();
      endList();
      continue;
    }
    if (list && /^ {2,}\S/.test(line) && list.lastElementChild) {
      // An indented line goes on with the item above it.
      list.lastElementChild.append(document.createElement('br'), inline(line.trim()));
      continue;
    }
    endList();
    paragraph.push(line);
  }
  endParagraph();
  return fragment;
}

/**
 * The subset's inline part as plain text (what {@link renderInline}
 * shows, without its marks).
 * @param {string} text
 * @returns {string}
 */
export function plainInline(text) {
  // Built from plain text nodes, so the hidden characters are still
  // there for the element it goes into to show (PROD-7).
  return inline((text || '').replace(/\s*\n\s*/g, ' '), false, (piece) => document.createTextNode(piece))
    .textContent || '';
}

/**
 * One line of the subset's inline part (code spans and emphasis; a link
 * shows its text only), for places where only phrasing content may go,
 * such as a card that is a button. Line breaks become spaces.
 * @param {string} text
 * @returns {DocumentFragment}
 */
export function renderInline(text) {
  return inline(text.replace(/\s*\n\s*/g, ' '), false);
}

/** A scheme, as an address begins. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** Text that reads as an address: a scheme, or a dotted host name that
 *  ends in letters (`host.tld`, `www.host.tld/path`); the ideographic and
 *  full-width stops count as dots, as a browser takes them so. */
const ADDRESS = /:\/\/|[\p{L}\p{N}-][.\u3002\uFF0E\uFF61](?:[\p{L}\p{N}-]+[.\u3002\uFF0E\uFF61])*\p{L}{2,}/u;

/**
 * A link's URL as the browser reads it (`href`), or `null` when it is
 * not one: such a link stays literal text.
 * @param {string} url
 * @returns {string | null}
 */
function parsed(url) {
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
}

/**
 * PROD-7: whether a link's text (as shown) looks like an address
 * other than its target `target` (a URL's href). Text that is the
 * target, or the target's site or a path of it cut at a `/`, `?` or `#`,
 * is honest; anything else that looks like an address misleads.
 * @param {string} said
 * @param {string} target
 * @returns {boolean}
 */
function misleads(said, target) {
  const text = withoutHidden(said).trim();
  if (!ADDRESS.test(text)) return false;
  /** @type {URL} */
  let claimed;
  try {
    claimed = new URL(SCHEME.test(text) ? text : 'https://' + text);
  } catch {
    return true;
  }
  const real = new URL(target);
  if (SCHEME.test(text) && claimed.protocol !== real.protocol) return true;
  if (claimed.host !== real.host || claimed.username || claimed.password) return true;
  const path = claimed.pathname + claimed.search + claimed.hash;
  const whole = real.pathname + real.search + real.hash;
  if (path === '/' || path === whole) return false;
  return !(whole.startsWith(path) && (path.endsWith('/') || '/?#'.includes(whole[path.length])));
}

/**
 * For each position, where `marker` next starts at or after it (or
 * `text.length`): one backward pass.
 * @param {string} text
 * @param {(at: number) => boolean} starts whether a marker starts there.
 * @returns {Int32Array}
 */
function nextTable(text, starts) {
  const next = new Int32Array(text.length + 1);
  next[text.length] = text.length;
  for (let at = text.length - 1; at >= 0; at--) next[at] = starts(at) ? at : next[at + 1];
  return next;
}

/**
 * The inline nodes of one line: code spans, emphasis and web links; the
 * rest as text.
 * @param {string} text
 * @param {boolean} [links] whether links are links (else their text).
 * @param {(text: string) => Node} [toNodes] how text becomes nodes.
 * @returns {DocumentFragment}
 */
function inline(text, links = true, toNodes = textNodes) {
  /** @param {number} i */
  const at = (i) => text.charCodeAt(i);
  const STAR = 42, UNDER = 95, TICK = 96;
  /** @param {number} i @param {number} code */
  const runOf = (i, code) => {
    let end = i;
    while (at(end) === code) end++;
    return end - i;
  };
  // Where each kind of delimiter next starts: a single `*`/`_` is one
  // not beside another of its kind; a double is exactly two.
  /** @param {number} code @returns {(i: number) => boolean} */
  const single = (code) => (i) => at(i) === code && at(i - 1) !== code && at(i + 1) !== code;
  /** @param {number} code @returns {(i: number) => boolean} */
  const double = (code) => (i) => at(i) === code && at(i + 1) === code && at(i - 1) !== code && at(i + 2) !== code;
  /** @type {Record<string, Int32Array>} */
  const next = {
    '*': nextTable(text, single(STAR)),
    '_': nextTable(text, single(UNDER)),
    '**': nextTable(text, double(STAR)),
    '__': nextTable(text, double(UNDER)),
    ']': nextTable(text, (i) => text[i] === ']'),
    ')': nextTable(text, (i) => text[i] === ')'),
  };
  // Code spans: each backtick run, and the next run of the same length.
  /** @type {Map<number, number>} */
  const closer = new Map();
  /** @type {Map<number, number>} last open run of each length */
  const open = new Map();
  for (let i = 0; i < text.length;) {
    if (at(i) !== TICK) { i++; continue; }
    const length = runOf(i, TICK);
    const start = open.get(length);
    if (start === undefined) {
      open.set(length, i);
    } else {
      closer.set(start, i);
      open.delete(length);
    }
    i += length;
  }
  return spans({ text, next, closer, links, toNodes }, 0, text.length, new Set());
}

/**
 * What {@link spans} reads: the line, its tables, and how it shows.
 * @typedef {object} Line
 * @property {string} text
 * @property {Record<string, Int32Array>} next
 * @property {Map<number, number>} closer the code spans' closing runs.
 * @property {boolean} links whether links are links (else their text).
 * @property {(text: string) => Node} toNodes how text becomes nodes.
 */

/**
 * The inline nodes of the line from `start` to `end`; `inside` holds the
 * delimiters already open around this range (they do not nest again, so
 * the depth, and with it the work per character, is bounded).
 * @param {Line} line
 * @param {number} start
 * @param {number} end
 * @param {Set<string>} inside
 * @returns {DocumentFragment}
 */
function spans(line, start, end, inside) {
  const { text, next, closer, links, toNodes } = line;
  const fragment = document.createDocumentFragment();
  let plain = start;
  /** @param {number} upTo */
  const flush = (upTo) => {
    if (upTo > plain) fragment.append(toNodes(text.slice(plain, upTo)));
  };
  let i = start;
  while (i < end) {
    const c = text[i];
    if (c === '`') {
      let length = 1;
      while (text[i + length] === '`') length++;
      const close = closer.get(i);
      if (close !== undefined && close + length <= end) {
        flush(i);
        const code = document.createElement('code');
        code.append(toNodes(text.slice(i + length, close)));
        fragment.append(code);
        i = close + length;
        plain = i;
      } else {
        i += length;
      }
      continue;
    }
    if (c === '*' || c === '_') {
      const marker = text[i + 1] === c && text[i + 2] !== c ? c + c : c;
      const table = next[marker];
      const contentStart = i + marker.length;
      const close = table && contentStart < end ? table[contentStart] : end;
      const opens = table && table[i] === i && !inside.has(marker) &&
        close < end && close > contentStart && !/\s/.test(text[contentStart]) && !/\s/.test(text[close - 1]);
      if (opens) {
        flush(i);
        const element = document.createElement(marker.length === 2 ? 'strong' : 'em');
        const nested = new Set(inside);
        nested.add(marker);
        element.append(spans(line, contentStart, close, nested));
        fragment.append(element);
        i = close + marker.length;
        plain = i;
      } else {
        i += marker.length;
      }
      continue;
    }
    // `![…](…)` is an image: it stays literal, as does everything else.
    if (c === '[' && !inside.has('[') && text[i - 1] !== '!') {
      const label = next[']'][i + 1];
      if (label < end && text[label + 1] === '(') {
        const paren = next[')'][label + 2];
        const url = paren < end ? text.slice(label + 2, paren) : '';
        const target = paren < end && label > i + 1 && WEB_URL.test(url) ? parsed(url) : null;
        if (target) {
          flush(i);
          const nested = new Set(inside);
          nested.add('[');
          const shown = spans(line, i + 1, label, nested);
          const said = spans({ ...line, toNodes: (piece) => document.createTextNode(piece) }, i + 1, label, nested);
          if (misleads(said.textContent || '', target)) {
            // PROD-7: the text names another address: where the link
            // really goes follows it, inside it, marked as the page's own.
            const real = document.createElement('span');
            real.className = 'real-target';
            real.append('(goes to ', toNodes(target), ')');
            shown.append(' ', real);
          }
          if (links) {
            const link = document.createElement('a');
            link.href = url;
            link.rel = 'noopener noreferrer';
            link.target = '_blank';
            link.append(shown);
            fragment.append(link);
          } else {
            fragment.append(shown);
          }
          i = paren + 1;
          plain = i;
          continue;
        }
      }
    }
    i++;
  }
  flush(end);
  return fragment;
}
