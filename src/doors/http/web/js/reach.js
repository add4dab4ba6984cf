// @ts-check
// Who can answer the open bundle (PPL-1a): who it reaches, by name, in
// one line under the answer view's facts; read again when members change.

import { request, rpcPath } from './api.js';
import { $, setText } from './dom.js';
import { listOf, reachText } from './format.js';
import { state } from './state.js';

/** @template T @typedef {import('./api.js').Reply<T>} Reply */
/** @typedef {import('./api.js').PeopleReply} PeopleReply */

/**
 * PPL-1a: who can answer the open bundle (who it reaches: its
 * workspace's owner and members), in one line under its facts, the
 * signed-in user first as "You"; nothing for a bundle that reaches nobody
 * by name (in no or an unowned workspace, which every user sees), one
 * settled, or one no longer seen. Read again when members change.
 */
export async function showReach() {
  const open = state.open;
  const line = $('answer-reach');
  // LINK-3: a link reads no directory: who else can answer is not shown.
  if (!open || open.done || state.link) {
    line.hidden = true;
    delete line.dataset.read;
    return;
  }
  /** @type {Reply<PeopleReply>} */
  const reply = await request('POST', rpcPath('people'), { pending_id: open.bundle.pending_id });
  if (state.open !== open || open.done) return;
  const people = reply.status === 200 && Array.isArray(reply.body.people) ? reply.body.people : [];
  const me = state.principal && state.principal.kind === 'user' ? state.principal.user_id : '';
  const known = people.filter((person) => person && typeof person.user_id === 'string');
  const others = known.filter((person) => person.user_id !== me).map((person) => person.name || person.user_id);
  const names = others.length < known.length ? ['You', ...others] : others;
  const text = reachText(names);
  setText(line, text);
  // The whole list on hover when the line names only some.
  line.title = names.length > 3 ? listOf(names) : '';
  line.hidden = !text;
  // Which bundle it was read for (the browser tests wait on it).
  line.dataset.read = open.bundle.pending_id;
}
