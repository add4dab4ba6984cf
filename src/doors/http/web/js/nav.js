// @ts-check
// The ways from one view to another: opening a bundle, going back to the
// waiting list or to "Answered" (UI-18), and taking a settled bundle off
// the list. A view calls these; inbox.js, the one module that knows every
// view, says at start-up what they do. So no view imports another.

/**
 * What each way does, as inbox.js wires it.
 * @typedef {object} Ways
 * @property {(id: string, origin?: 'list' | 'history') => void} openBundle
 *   opens a bundle in the answer view; `origin` is the view "Back" returns to.
 * @property {() => void} showList back to the waiting list, focus on it.
 * @property {() => void} showHistory back to the "Answered" view, focus on it.
 * @property {(id: string) => void} removeFromList a bundle leaves the waiting list.
 */

/** Until inbox.js wires them, before the page starts, the ways lead nowhere. @type {Ways} */
let ways = {
  openBundle: () => {},
  showList: () => {},
  showHistory: () => {},
  removeFromList: () => {},
};

/**
 * Says what each way does (inbox.js, once).
 * @param {Ways} wired
 */
export function wireWays(wired) {
  ways = wired;
}

/**
 * @param {string} id a bundle's `pending_id`.
 * @param {'list' | 'history'} [origin] which view "Back" returns to.
 */
export const openBundle = (id, origin) => ways.openBundle(id, origin);

export const showList = () => ways.showList();

export const showHistory = () => ways.showHistory();

/** @param {string} id */
export const removeFromList = (id) => ways.removeFromList(id);

/**
 * UI-18: the page's address follows the view: `#/` the waiting list,
 * `#/history` the "Answered" view, `#/b/<pending_id>` a bundle. A new
 * address is a new step for the back button, unless `replace`.
 * @param {string} hash
 * @param {boolean} [replace]
 */
export function setRoute(hash, replace = false) {
  const current = location.hash || '#/';
  if (current === hash) return;
  if (replace) history.replaceState(null, '', hash);
  else history.pushState(null, '', hash);
}
