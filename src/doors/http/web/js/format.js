// @ts-check
// The page's words for what the API answers: times, ages and deadlines,
// who decided, where a bundle comes from, counts; and how written text
// shows its hidden characters (PROD-7). Pure functions of
// their arguments (and the browser's clock and locale) at the bottom of
// the page's layers: this module imports no other (the types below are
// comments, erased), so every module may use it.

/** @typedef {import('./api.js').Answer} Answer */
/** @typedef {import('./api.js').Bundle} Bundle */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').Principal} Principal */
/** @typedef {import('./api.js').Question} Question */
/** @typedef {import('./api.js').Response} Response */

/**
 * @param {number} seconds
 * @returns {string}
 */
export function ageText(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return 'just now';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

/**
 * UI-11: how long until a deadline `seconds` away, in words: whole
 * seconds (rounded up, so "due in 1 s" is the last) in the last minute,
 * minutes in the last hour.
 * @param {number} seconds
 * @returns {string}
 */
export function countdownText(seconds) {
  if (seconds <= 0) return 'due now';
  const s = Math.ceil(seconds);
  if (s < 60) return 'due in ' + s + ' s';
  if (s < 3600) return 'due in ' + Math.ceil(s / 60) + ' min';
  if (s < 86400) return 'due in ' + Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  return 'due in ' + Math.floor(s / 86400) + ' d';
}

/**
 * UI-11: in how many seconds {@link countdownText} of a deadline
 * `seconds` away says something else: each second in the last minute,
 * once a minute above it, so a long list is refreshed no more often than
 * its texts change. `null` once it is due.
 * @param {number} seconds
 * @returns {number | null}
 */
export function countdownChangesIn(seconds) {
  if (seconds <= 0) return null;
  const s = Math.ceil(seconds);
  let below = 86400 * Math.floor(s / 86400) - 1;
  if (s <= 60) below = s - 1;
  else if (s < 3600) below = 60 * (Math.ceil(s / 60) - 1);
  else if (s < 86400) below = 60 * Math.floor(s / 60) - 1;
  return Math.max(0.001, seconds - below);
}

/**
 * In how many seconds {@link ageText} of an age of `seconds` says
 * something else: at the next minute, hour or day it counts in.
 * @param {number} seconds
 * @returns {number}
 */
export function ageChangesIn(seconds) {
  const s = Math.max(0, seconds);
  const unit = s < 3600 ? 60 : s < 86400 ? 3600 : 86400;
  return Math.max(0.001, unit - (s % unit));
}

/**
 * Seconds until a bundle's deadline on the server's clock, or `null`
 * without one. The bundle was received at `receivedAt` (a
 * `performance.now()`); its `age_seconds`, whole seconds, says the
 * server's clock then stood in the second after `created_at` plus that
 * age. The browser's clock is taken where it agrees (to the second, and
 * a moment for the reply's way), else the nearest instant that does: so
 * the countdown is true to the second however far the clocks are apart,
 * and exact where they agree.
 * @param {Bundle} bundle
 * @param {number} receivedAt
 * @returns {number | null}
 */
export function secondsLeft(bundle, receivedAt) {
  if (!bundle.expires_at) return null;
  const expires = Date.parse(bundle.expires_at);
  const earliest = Date.parse(bundle.created_at) + bundle.age_seconds * 1000;
  if (!Number.isFinite(expires) || !Number.isFinite(earliest)) return null;
  const since = performance.now() - receivedAt;
  const then = Math.min(Math.max(Date.now() - since, earliest), earliest + 1500);
  return (expires - then - since) / 1000;
}

/** The page's one way to write a time (UI-19): the browser's locale,
 *  hours and minutes, seconds where they matter. */
const TIME = writer({ timeStyle: 'short' });
const TIME_S = writer({ timeStyle: 'medium' });
const DATE_TIME = writer({ dateStyle: 'medium', timeStyle: 'short' });
const DATE_TIME_S = writer({ dateStyle: 'medium', timeStyle: 'medium' });

/**
 * A writer of instants in the browser's locale; "9:24 PM" is never
 * broken before its "PM".
 * @param {Intl.DateTimeFormatOptions} options
 * @returns {{ format: (at: Date) => string }}
 */
function writer(options) {
  const format = new Intl.DateTimeFormat([], options);
  return {
    format: (at) => format.formatToParts(at).map((part, i, parts) => {
      const next = parts[i + 1];
      return part.type === 'literal' && next && next.type === 'dayPeriod' ? '\u00a0' : part.value;
    }).join(''),
  };
}

/**
 * An instant as the browser's clock shows it: the time, and the date when
 * it is not today; with seconds when `seconds` is set.
 * @param {string} iso RFC 3339.
 * @param {boolean} [seconds]
 * @returns {string}
 */
export function localTime(iso, seconds = false) {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  if (at.toDateString() !== new Date().toDateString()) return (seconds ? DATE_TIME_S : DATE_TIME).format(at);
  return (seconds ? TIME_S : TIME).format(at);
}

/**
 * UI-18, UI-19: an instant as an absolute local date and time, in the
 * same format as {@link localTime}.
 * @param {string} iso RFC 3339.
 * @param {boolean} [seconds]
 * @returns {string}
 */
export function absoluteTime(iso, seconds = false) {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return (seconds ? DATE_TIME_S : DATE_TIME).format(at);
}

/**
 * Plain text, trimmed to about `max` characters at a word: a prompt's
 * first words on a card.
 * @param {string} text
 * @param {number} max
 * @returns {string}
 */
export function trimmed(text, max) {
  const plain = text.replace(/\s+/g, ' ').trim();
  if (plain.length <= max) return plain;
  const cut = plain.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, '') + '\u2026';
}

/**
 * `n` and the noun, plural unless `n` is 1: "1 question", "3 attempts".
 * @param {number} n
 * @param {string} noun singular, made plural with an "s".
 * @returns {string}
 */
export function countOf(n, noun) {
  return n + ' ' + noun + (n === 1 ? '' : 's');
}

/**
 * NUDGE-5: how often a bundle was reminded, in words ("reminded once",
 * "reminded twice", "reminded 3 times"); `""` for never.
 * @param {number} n
 * @returns {string}
 */
export function remindedText(n) {
  if (!(n >= 1)) return '';
  if (n === 1) return 'reminded once';
  if (n === 2) return 'reminded twice';
  return 'reminded ' + Math.floor(n) + ' times';
}

/**
 * "A", "A and B", "A, B and C".
 * @param {string[]} names
 * @returns {string}
 */
export function listOf(names) {
  if (names.length <= 1) return names.join('');
  return names.slice(0, -1).join(', ') + ' and ' + names[names.length - 1];
}

/**
 * Who is signed in, as the header shows it.
 * @param {Principal | null} principal
 * @returns {string}
 */
export function principalText(principal) {
  if (!principal) return '';
  switch (principal.kind) {
    case 'user': return 'user:' + principal.user_id;
    case 'agent': return 'agent:' + principal.user_id + '/' + principal.agent_id;
    default: return principal.kind;
  }
}

/**
 * Who is signed in, by name where the directory has one (PPL-1a): the
 * user's name, or the agent and whose it is; else {@link principalText}.
 * @param {Principal | null} principal
 * @param {string} name the user's name, `""` if none.
 * @returns {string}
 */
export function callerText(principal, name) {
  if (!principal || !name) return principalText(principal);
  if (principal.kind === 'user') return name;
  if (principal.kind === 'agent') return 'agent ' + principal.agent_id + ' of ' + name;
  return principalText(principal);
}

/**
 * Who can answer a bundle (PPL-1a: who it reaches), in one short line:
 * "Alice can answer.", "You and Bob can answer.", "Alice, Bob and Carol
 * can answer.", "Alice, Bob and 3 others can answer."; `""` for nobody.
 * @param {string[]} names as shown, the caller's own first, as "You".
 * @returns {string}
 */
export function reachText(names) {
  if (!names.length) return '';
  const shown = names.length <= 3 ? names : [...names.slice(0, 2), (names.length - 2) + ' others'];
  return listOf(shown) + ' can answer.';
}

/**
 * A bundle's name for people: its first question's title (or prompt).
 * @param {Bundle} bundle
 * @returns {string}
 */
export function titleOf(bundle) {
  const first = bundle.questions[0];
  return (first && (first.title || first.prompt)) || 'a request';
}

/**
 * UI-19: the task's title in the workspace's name, ids where unnamed.
 * @param {Bundle} bundle
 * @returns {string}
 */
export function placeText(bundle) {
  const task = bundle.task_title || bundle.task_id;
  const workspace = bundle.workspace_name || bundle.workspace_id;
  return workspace ? task + ' \u00b7 ' + workspace : task;
}

/**
 * A question's name for people: its title, else "Question n".
 * @param {Question} question
 * @param {number} index
 * @returns {string}
 */
export function questionName(question, index) {
  return question.title || 'Question ' + (index + 1);
}

/** @type {Record<string, string>} */
const DECIDER = {
  user: 'another person',
  agent: 'an agent',
  system: 'the host system',
  deadline: 'its deadline',
  quorum: 'a quorum of voters',
};

/**
 * Who decided, in words (WIRE-2's `decided_by`, WIRE-6's
 * `decided_by_caller`).
 * @param {Response} response
 * @param {boolean} mine
 * @returns {string}
 */
export function deciderText(response, mine) {
  // QUO-4: a quorum decides, this person's vote among them or not.
  if (response.decided_by === 'quorum') return mine ? 'a quorum, you among its voters' : DECIDER.quorum;
  if (mine) return 'you';
  return DECIDER[response.decided_by] || 'someone (not recorded)';
}

/**
 * One answer as the person reads it: the chosen options' labels, then
 * the typed text in quotes, so it does not read as one more option.
 * @param {BundleDetail} bundle
 * @param {Answer} answer
 * @returns {string}
 */
export function answerText(bundle, answer) {
  const question = bundle.questions.find((q) => q.question_id === answer.question_id);
  const labels = answer.selected_options.map((optionId) => {
    const option = question && question.options.find((o) => o.option_id === optionId);
    return option ? option.label : optionId;
  });
  const parts = [];
  if (labels.length) parts.push(labels.join(', '));
  if (answer.custom_text) parts.push('“' + answer.custom_text + '”');
  return parts.length ? parts.join('\n') : '(no answer)';
}

/**
 * What was decided, in one line: the answers' labels (typed text in
 * quotes), "Rejected: reason" or "Cancelled".
 * @param {BundleDetail} bundle
 * @returns {string}
 */
export function decisionText(bundle) {
  const response = bundle.response;
  if (bundle.status === 'cancelled') return 'Cancelled';
  if (!response) return '';
  if (bundle.status === 'rejected' || response.rejected) {
    return response.reject_reason ? 'Rejected: ' + response.reject_reason : 'Rejected';
  }
  const answers = Array.isArray(response.answers) ? response.answers : [];
  const parts = answers.map((answer) => answerText(bundle, answer).split('\n').join(' '));
  return parts.length ? parts.join('; ') : '(no answer)';
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
 * PROD-7: characters that change how text reads while showing nothing
 * themselves: the bidirectional controls (embeddings, overrides,
 * isolates, the direction marks) and the zero-width ones. `WS` + U+202E
 * + `cod.exe` reads "WSexe.doc".
 */
const HIDDEN = /[\u061C\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/g;

/** @type {Record<number, string>} their names, for the marker's title. */
const HIDDEN_NAMES = {
  0x061C: 'Arabic letter mark',
  0x200B: 'zero-width space',
  0x200C: 'zero-width non-joiner',
  0x200D: 'zero-width joiner',
  0x200E: 'left-to-right mark',
  0x200F: 'right-to-left mark',
  0x202A: 'left-to-right embedding',
  0x202B: 'right-to-left embedding',
  0x202C: 'pop directional formatting',
  0x202D: 'left-to-right override',
  0x202E: 'right-to-left override',
  0x2060: 'word joiner',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xFEFF: 'zero-width no-break space',
};

/** Letters of the scripts whose spelling needs the joiners (Persian's
 *  non-joiner, the Indic half forms): between two of them a joiner
 *  changes the letters' shapes, so it shows and stays. */
const JOINED = /[\p{scx=Arab}\p{scx=Syrc}\p{scx=Nkoo}\p{scx=Mong}\p{scx=Deva}\p{scx=Beng}\p{scx=Guru}\p{scx=Gujr}\p{scx=Orya}\p{scx=Taml}\p{scx=Telu}\p{scx=Knda}\p{scx=Mlym}\p{scx=Sinh}]/u;
/** An emoji (or its modifier or presentation selector) that a
 *  zero-width joiner binds to the next into one picture. */
const EMOJI = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]/u;

/**
 * Whether the joiner at `at` does a visible job: between letters of a
 * joining script, or (U+200D) between two emoji of one picture.
 * @param {string} text
 * @param {number} at
 * @returns {boolean}
 */
function joins(text, at) {
  const before = Array.from(text.slice(Math.max(0, at - 2), at)).pop() || '';
  const next = text.codePointAt(at + 1);
  const after = next === undefined ? '' : String.fromCodePoint(next);
  if (JOINED.test(before) && JOINED.test(after)) return true;
  return text[at] === '\u200D' && EMOJI.test(before) && /\p{Extended_Pictographic}/u.test(after);
}

/**
 * PROD-7, the one rule for showing agent- and user-written text: `text`
 * in pieces, each hidden character (above) a piece of its own shown as a
 * visible marker, `⟨U+202E⟩`, with its name; the rest as it is. For
 * display only: what is stored and sent stays unchanged.
 * @param {string} text
 * @returns {{ text: string, hidden: string }[]} `hidden` is the name of a
 *   marker's character, `''` for plain text.
 */
export function shownPieces(text) {
  if (text.search(HIDDEN) < 0) return [{ text, hidden: '' }];
  /** @type {{ text: string, hidden: string }[]} */
  const pieces = [];
  let plain = 0;
  for (const match of text.matchAll(HIDDEN)) {
    const at = match.index || 0;
    if (text[at] === '\u200C' || text[at] === '\u200D') {
      if (joins(text, at)) continue;
    }
    if (at > plain) pieces.push({ text: text.slice(plain, at), hidden: '' });
    const code = text.charCodeAt(at);
    pieces.push({
      text: '\u27e8U+' + code.toString(16).toUpperCase().padStart(4, '0') + '\u27e9',
      hidden: HIDDEN_NAMES[code] || 'hidden character',
    });
    plain = at + 1;
  }
  if (plain < text.length) pieces.push({ text: text.slice(plain), hidden: '' });
  return pieces;
}

/**
 * PROD-7: `text` with its hidden characters as visible markers, as one
 * string, for places that take no elements (attributes, notifications).
 * @param {string} text
 * @returns {string}
 */
export function shown(text) {
  return shownPieces(text).map((piece) => piece.text).join('');
}

/**
 * PROD-7: `text` without its hidden characters, to judge what it looks
 * like (a link's text, say).
 * @param {string} text
 * @returns {string}
 */
export function withoutHidden(text) {
  return text.replace(HIDDEN, '');
}

/**
 * The answer view's heading: a permission request says it is one (UI-15).
 * @param {import('./api.js').BundleDetail} bundle
 * @returns {string}
 */
export function answerHeading(bundle) {
  const first = bundle.questions[0];
  const single = bundle.questions.length === 1 && first ? first.title || '' : '';
  if (bundle.kind === 'permission') return 'Permission requested' + (single ? ': ' + single : '');
  return single || (bundle.questions.length === 1 ? 'Answer' : 'Answer ' + bundle.questions.length + ' questions');
}
