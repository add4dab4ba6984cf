// @ts-check
// What the page knows, in one object every module reads and changes.

/** @typedef {import('./api.js').Principal} Principal */
/** @typedef {import('./api.js').Bundle} Bundle */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').EventData} EventData */

/**
 * A listed bundle, with when this page received it (`performance.now()`).
 * @typedef {Bundle & { receivedAt: number }} ListedBundle
 */

/**
 * The bundle in the answer view.
 * @typedef {object} OpenBundle
 * @property {BundleDetail} bundle
 * @property {boolean} done settled or closed: the form is gone.
 * @property {boolean} sending
 * @property {number} question the current question's index.
 * @property {'list' | 'history'} from the view "Back" returns to.
 */

/**
 * How a bundle was settled or closed: the event's type and data.
 * @typedef {{ type: string, data: EventData }} SettledBy
 */

/**
 * What was typed and ticked in a bundle left unsent.
 * @typedef {object} Draft
 * @property {string[][]} selected per question, the ticked option ids.
 * @property {string[]} texts per question.
 * @property {string} reason
 * @property {boolean} rejecting
 */

export const state = {
  /** LINK-2, LINK-3: the answer link's token in one-bundle mode (the
   *  page at `/a/<token>`), else `''`. */
  link: '',
  /** LINK-3: whose link it is, as the link API says.
   *  @type {import('./api.js').Person | null} */
  linkAs: null,
  /** @type {Principal | null} */
  principal: null,
  /** @type {string | null} */
  via: null,
  /** Loaded pending bundles, LIST-3 order; each with `receivedAt`.
   *  @type {ListedBundle[]} */
  bundles: [],
  /** @type {string | null} */
  nextCursor: null,
  filter: '',
  current: 0,
  /** The bundle in the answer view: {bundle, done, sending, question}.
   *  @type {OpenBundle | null} */
  open: null,
  /** Bundles settled or closed since sign-in (id → {type, data} of
   *  the event, or null): never pending again.
   *  @type {Map<string, SettledBy | null>} */
  settled: new Map(),
  /** @type {Map<string, Draft>} */
  drafts: new Map(),
  /** @type {EventSource | null} */
  stream: null,
  retry: 0,
  listGeneration: 0,
  /** Changes at each open, sign-in and sign-out: late replies compare. */
  openGeneration: 0,
  /** @type {object | null} */
  catchUp: null,
  /** The earliest `created_at` of asked events not yet fetched.
   *  @type {string | null} */
  askedSince: null,
  /** UI-18: which view shows. @type {'waiting' | 'answered'} */
  tab: 'waiting',
  /** UI-18: the decided bundles loaded, newest first.
   *  @type {BundleDetail[]} */
  history: [],
  /** @type {string | null} */
  historyCursor: null,
  historyLoaded: false,
  historyGeneration: 0,
  /** UI-21: bundles with a request of this page in flight.
   *  @type {Set<string>} */
  inFlight: new Set(),
  /** UI-18, UI-21: bundles this page's own send won.
   *  @type {Set<string>} */
  mine: new Set(),
  /** QUO-8: quorum bundles this user voted on, as this page learned it
   *  (its own vote's reply, a `bundle.voted` event of this user).
   *  @type {Set<string>} */
  voted: new Set(),
  /** The stream's last retry delay, in milliseconds (UI-20). */
  retryDelay: 0,
};
