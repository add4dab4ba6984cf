// @ts-check
// UI-7: VAL-5's limit on free text, at the input: a count under each
// field, and an input that would pass the limit refused whole, with a
// message, never cut. The server checks the limit again; the page reads
// the one constant it enforces, which the server wrote into inbox.html.

const limitMeta = /** @type {HTMLMetaElement | null} */ (document.querySelector('meta[name="clarion-text-limit"]'));
if (!limitMeta) throw new Error('inbox.html has no clarion-text-limit');
/** UI-7: VAL-5's limit in code points, as the server wrote it in. */
const LIMIT = Number(limitMeta.content);

/**
 * @param {string} text
 * @returns {number}
 */
const codePoints = (text) => Array.from(text).length;

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
