// @ts-check
// A quorum bundle on the page (QUO-8): what it needs and where it stands,
// each vote by name with its choice and "Same as …" to copy it exactly,
// the warning that a different note is a different answer, Reject's
// words when one rejection decides, the form locked once the person has
// voted (or may not vote), what the announcement says after a vote, and
// the voters of a quorum's decision on the settled panel.

import { bundlePath, learnNames, nameOf, request } from './api.js';
import { $, announce, el, timeEl, toast } from './dom.js';
import { ageText, answerText, countOf, listOf } from './format.js';
import { fillAnswers } from './questions.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./state.js').OpenBundle} OpenBundle */

/**
 * What the answer view lets this module do to its form.
 * @typedef {object} Form
 * @property {() => void} sync the send button follows the form (UI-15).
 * @property {() => void} stopRejecting closes the reject panel if open.
 */

/** @typedef {import('./api.js').Bundle} Bundle */
/** @typedef {import('./api.js').BundleDetail} BundleDetail */
/** @typedef {import('./api.js').Quorum} Quorum */
/** @typedef {import('./api.js').Vote} Vote */
/** @typedef {import('./api.js').Answer} Answer */

/** The signed-in user's id, `""` for any other principal. */
const me = () => (state.principal && state.principal.kind === 'user' && state.principal.user_id) || '';

/**
 * The signed-in user's vote on the bundle, if any.
 * @param {Bundle} bundle
 * @returns {Vote | undefined}
 */
export function myVote(bundle) {
  const quorum = bundle.quorum;
  const user = me();
  if (!quorum || !Array.isArray(quorum.votes) || !user) return undefined;
  return quorum.votes.find((vote) => vote && vote.user_id === user);
}

/**
 * QUO-8: whether the signed-in user voted on the bundle (its votes say
 * so, or this page saw the vote recorded).
 * @param {Bundle} bundle
 * @returns {boolean}
 */
export const hasVoted = (bundle) => Boolean(bundle.quorum) && (state.voted.has(bundle.pending_id) || Boolean(myVote(bundle)));

/**
 * QUO-3b: a pending quorum bundle the caller may not vote on (again): it
 * voted, it is the requester or it is not eligible. Nothing is sendable.
 * @param {BundleDetail} bundle
 * @returns {boolean}
 */
export const votingLocked = (bundle) => Boolean(bundle.quorum) && bundle.status === 'pending' &&
  (bundle.may_vote !== true || hasVoted(bundle));

/**
 * QUO-8: Reject's words on a quorum bundle.
 * @param {Quorum} quorum
 * @returns {string}
 */
export const rejectWords = (quorum) => quorum.rejections <= 1
  ? 'One rejection decides: the agent is told the request was declined, with your reason if you give one.'
  : quorum.rejections + ' rejections decide: then the agent is told the request was declined, with the deciding reason.';

/**
 * What a vote chose, in one line: the answers' labels (typed text in
 * quotes), or the rejection's reason.
 * @param {Bundle} bundle
 * @param {Vote} vote
 * @returns {string}
 */
function choiceText(bundle, vote) {
  if (vote.rejected) return vote.reject_reason;
  const answers = Array.isArray(vote.answers) ? vote.answers : [];
  const texts = answers.map((answer) => answerText(/** @type {BundleDetail} */ (bundle), answer).split('\n').join(' '));
  return texts.join('; ') || '(no answer)';
}

/**
 * QUO-4: how many more votes like `vote` decide: the approvals still
 * missing from its group (identical answers that count), or the
 * rejections still missing.
 * @param {Quorum} quorum
 * @param {Vote} vote
 * @returns {number}
 */
function moreNeeded(quorum, vote) {
  const like = quorum.votes.filter((other) => other.counts &&
    (vote.rejected ? other.rejected : !other.rejected && other.digest === vote.digest));
  return Math.max(0, (vote.rejected ? quorum.rejections : quorum.approvals) - like.length);
}

/**
 * QUO-8, UI-21: the announcement after this page's vote was recorded.
 * @param {Quorum | null | undefined} quorum the reply's.
 * @returns {string}
 */
export function votedSentence(quorum) {
  const mine = quorum && Array.isArray(quorum.votes) ? quorum.votes.find((vote) => vote.user_id === me()) : undefined;
  if (!quorum || !mine) return 'Your vote was recorded.';
  const more = moreNeeded(quorum, mine);
  if (mine.rejected) return 'Your rejection was recorded; ' + more + ' more needed to reject';
  return 'Your vote was recorded; ' + more + ' more needed';
}

/** Which bundle the box shows, so a late read of names is dropped. */
let showing = '';

/**
 * QUO-8: the quorum box of the answer view: what it needs, each vote by
 * name with its choice (and "Same as …" while the person may vote), the
 * warning about notes, and the person's own state; hidden without a
 * quorum. Names are read first (PPL-1a).
 * @param {BundleDetail} bundle
 * @param {(vote: Vote, name: string) => void} same fills the form with a vote's answers.
 */
export async function renderQuorum(bundle, same) {
  const box = $('quorum');
  const quorum = bundle.quorum;
  showing = bundle.pending_id;
  if (!quorum || bundle.status !== 'pending') {
    box.hidden = true;
    return;
  }
  const votes = Array.isArray(quorum.votes) ? quorum.votes : [];
  await learnNames(votes.map((vote) => vote.user_id));
  // Another bundle opened, or this one settled (its panel shows alone).
  if (showing !== bundle.pending_id || !state.open || state.open.done) return;
  const user = me();
  const locked = votingLocked(bundle);
  $('quorum-need').textContent = countOf(quorum.approvals, 'approval') + ' needed' +
    (votes.length ? '' : ' \u00b7 no votes yet') + ' \u00b7 ' + rejectWords(quorum).split(':')[0].toLowerCase();
  const items = votes.map((vote) => {
    const mine = vote.user_id === user;
    const name = mine ? 'You' : nameOf(vote.user_id);
    const item = el('li', 'vote' + (mine ? ' mine' : ''));
    item.dataset.user = vote.user_id;
    const line = el('span', 'vote-line', name + (vote.rejected ? ' rejected ' : ' approved '));
    const seconds = (Date.now() - Date.parse(vote.at)) / 1000;
    line.append(timeEl(vote.at, ageText(Number.isFinite(seconds) ? seconds : 0)));
    const choice = choiceText(bundle, vote);
    if (choice) line.append(': ', el('span', 'vote-choice', choice));
    if (!vote.counts) line.append(el('span', 'hint', ' (does not count now)'));
    item.append(line);
    if (!mine && !vote.rejected && !locked) {
      const button = el('button', 'same', 'Same as ' + name);
      button.type = 'button';
      button.addEventListener('click', () => same(vote, name));
      item.append(button);
    }
    return item;
  });
  $('quorum-votes').replaceChildren(...items);
  $('quorum-votes').hidden = !items.length;
  $('quorum-warning').hidden = locked;
  const own = myVote(bundle);
  $('quorum-state').textContent = own || hasVoted(bundle)
    ? 'You voted; a vote cannot be changed, so the form is locked.' + (own ? ' ' + waitingFor(quorum, own) : '')
    : locked ? 'You may not vote on this request: ' + whyNot(quorum) : '';
  $('quorum-state').hidden = !locked;
  box.hidden = false;
}

/**
 * @param {Quorum} quorum
 * @param {Vote} own
 * @returns {string}
 */
function waitingFor(quorum, own) {
  const more = moreNeeded(quorum, own);
  return more ? countOf(more, own.rejected ? 'more rejection' : 'more approval') + ' like yours needed.' : '';
}

/**
 * @param {Quorum} quorum
 * @returns {string}
 */
function whyNot(quorum) {
  if (quorum.requested_by && quorum.requested_by === me()) return 'it was asked on your behalf, and others decide.';
  return 'you are not among its voters.';
}

/**
 * QUO-8: the form locked (nothing can be chosen, typed or sent; cancel
 * stays where the person may cancel) or open again.
 * @param {boolean} locked
 */
export function lockForm(locked) {
  for (const fieldset of /** @type {NodeListOf<HTMLFieldSetElement>} */ ($('questions').querySelectorAll('fieldset.question'))) {
    fieldset.disabled = locked;
  }
  $('answer-form').classList.toggle('locked', locked);
  // Unlocked, the send button steps aside while the reject panel is open.
  $('submit').hidden = locked || !$('reject').hidden;
  $('reject-open').hidden = locked;
  if (locked) {
    $('reject').hidden = true;
    $('reject-send').hidden = true;
    $('submit-help').hidden = true;
  }
}

/**
 * QUO-8: the voters of a quorum's decision, by name, the person's own
 * marked "(you)"; read from the bundle when the response has none.
 * @param {string[]} voters
 * @returns {Promise<string>}
 */
export async function votersText(voters) {
  await learnNames(voters);
  const user = me();
  return listOf(voters.map((id) => nameOf(id) + (id === user ? ' (you)' : '')));
}

/**
 * QUO-8: where the quorum stands, and the form locked once the person
 * voted (their vote filled in) or may not vote.
 * @param {BundleDetail} bundle
 * @param {Form} form
 */
export function showQuorum(bundle, form) {
  renderQuorum(bundle, (vote, name) => copyVote(vote, name, form));
  const locked = votingLocked(bundle);
  const own = myVote(bundle);
  if (locked && own && !own.rejected) fillAnswers($('questions'), bundle, own.answers);
  lockForm(locked);
  if (!locked) form.sync();
}

/**
 * QUO-8: "Same as …" fills the form with that vote's answers exactly
 * (choices and text); sending stays the person's own act.
 * @param {Vote} vote
 * @param {string} name
 * @param {Form} form
 */
function copyVote(vote, name, form) {
  const open = state.open;
  if (!open || open.done || open.sending || votingLocked(open.bundle)) return;
  form.stopRejecting();
  fillAnswers($('questions'), open.bundle, vote.answers);
  form.sync();
  announce('The form holds ' + name + '\u2019s answer; send it to add your approval.');
  $('submit').focus();
}

/**
 * QUO-8: the open bundle's votes read again (another person voted, or a
 * vote of this person was refused); a settled bundle is left to its
 * event (UI-6).
 * @param {string} id
 * @param {Form} form
 */
export async function refreshVotes(id, form) {
  const open = state.open;
  if (!open || open.bundle.pending_id !== id || open.done || !open.bundle.quorum) return;
  /** @type {Reply<BundleDetail>} */
  const reply = await request('GET', bundlePath(id));
  if (state.open !== open || open.done || open.sending) return;
  const bundle = reply.body;
  if (reply.status !== 200 || bundle.status !== 'pending' || !bundle.quorum) return;
  open.bundle.quorum = bundle.quorum;
  open.bundle.may_vote = bundle.may_vote;
  showQuorum(open.bundle, form);
}

/**
 * QUO-3, UI-6: this page's own vote recorded (`claimed: false`, status
 * `pending`): the person sees it, the form locks, and the announcement
 * says how many more are needed — never "someone else answered".
 * @param {OpenBundle} open
 * @param {boolean} here the bundle still shows.
 * @param {Quorum | null | undefined} quorum the reply's.
 * @param {Form} form
 */
export function ownVote(open, here, quorum, form) {
  const id = open.bundle.pending_id;
  state.voted.add(id);
  state.drafts.delete(id);
  if (quorum) open.bundle.quorum = quorum;
  open.bundle.may_vote = false;
  const said = votedSentence(quorum);
  announce(said);
  if (here) showQuorum(open.bundle, form);
  else toast(said);
}

/**
 * QUO-3's refusals as the person reads them: nothing was recorded.
 * @param {string} code `not_eligible` or `already_voted`.
 * @returns {string}
 */
export const refusal = (code) => code === 'not_eligible'
  ? 'Nothing was recorded: you may not vote on this request.'
  : 'Nothing was recorded: you already voted on this request otherwise, and a vote cannot be changed.';
