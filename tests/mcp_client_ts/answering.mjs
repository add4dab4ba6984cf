// The answering server (`clarion mcp --as ...`, WIRE-4) under the official
// TypeScript MCP SDK. Run by tests/it/doors_mcp_typescript.rs on both
// backends, with a database it prepared through the library:
//
//   CLARION_BIN=target/debug/clarion CLARION_DATABASE_URL=... \
//   CLARION_PENDING_ID=... CLARION_ENDED_ID=... node answering.mjs
//
// CLARION_PENDING_ID is alice's pending bundle of one question,
// CLARION_ENDED_ID one whose session ended. Prints the winner's response as
// JSON on its last line.

import assert from 'node:assert/strict';

import { connect, listed, ok, refused, run } from './clarion.mjs';

const PENDING_ID = process.env.CLARION_PENDING_ID;
const ENDED_ID = process.env.CLARION_ENDED_ID;
const TOOLS = ['list_pending_questions', 'answer_question', 'list_settled_questions'];

const answers = (choice, note) => [
  { question_id: 'q1', selected_options: [choice], custom_text: note },
];

async function asAlice() {
  const client = await connect('--as', 'user:alice');
  try {
    await listed(client, TOOLS);

    const page = await ok(client, 'list_pending_questions', { limit: 10 });
    assert.deepEqual(page.bundles.map((b) => b.pending_id), [PENDING_ID]);
    assert.equal(page.bundles[0].questions[0].options[0].option_id, 'q1_opt1');

    const codes = [
      await refused(client, 'answer_question', { pending_id: 'no-such-bundle', answers: answers('q1_opt1', '') },
        'not_found', 'clarification request not found'),
      await refused(client, 'list_settled_questions', { limit: '10' },
        'validation', 'limit: expected an integer, got a string'),
      await refused(client, 'answer_question', { pending_id: PENDING_ID, answers: answers('q1_opt9', '') },
        'validation', 'answers[0].selected_options: unknown option id "q1_opt9"'),
      await refused(client, 'answer_question', { pending_id: PENDING_ID, answers: 'q1' },
        'validation', 'answers: expected an array, got a string'),
      await refused(client, 'answer_question', { pending_id: ENDED_ID, answers: answers('q1_opt1', '') },
        'no_longer_active', 'clarification request is no longer active'),
    ];

    const won = await ok(client, 'answer_question', { pending_id: PENDING_ID, answers: answers('q1_opt2', ' from typescript ') });
    assert.deepEqual(Object.keys(won), ['claimed', 'status', 'response', 'quorum']);
    assert.equal(won.claimed, true);
    assert.equal(won.status, 'answered');
    assert.equal(won.response.answers[0].custom_text, 'from typescript');

    const settled = await ok(client, 'list_settled_questions', { limit: 10 });
    assert.ok(settled.bundles.some((b) => b.pending_id === PENDING_ID), JSON.stringify(settled));
    const mine = settled.bundles.find((b) => b.pending_id === PENDING_ID);
    assert.deepEqual(mine.response, won.response);
    assert.equal(mine.decided_by_caller, true);
    return { codes, response: won.response };
  } finally {
    await client.close();
  }
}

/** An agent without grants sees no tool and is denied every one (AUTH-2). */
async function asAgentWithoutGrants() {
  const client = await connect('--as', 'agent:alice/bot:');
  try {
    await listed(client, []);
    return [
      await refused(client, 'list_pending_questions', {}, 'capability_denied', 'capability not authorized'),
      await refused(client, 'answer_question', { pending_id: PENDING_ID, answers: answers('q1_opt1', '') },
        'capability_denied', 'capability not authorized'),
      await refused(client, 'list_settled_questions', {}, 'capability_denied', 'capability not authorized'),
    ];
  } finally {
    await client.close();
  }
}

/** A reader may list but not answer: the hidden tool is denied. */
async function asReader() {
  const client = await connect('--as', 'agent:alice/reader:questions:read');
  try {
    await listed(client, ['list_pending_questions', 'list_settled_questions']);
    await ok(client, 'list_pending_questions', {});
    return [
      await refused(client, 'answer_question', { pending_id: PENDING_ID, answers: answers('q1_opt1', '') },
        'capability_denied', 'capability not authorized'),
    ];
  } finally {
    await client.close();
  }
}

run(async () => {
  const alice = await asAlice();
  const denied = [...(await asAgentWithoutGrants()), ...(await asReader())];
  return { codes: [...alice.codes, ...denied], response: alice.response };
});
