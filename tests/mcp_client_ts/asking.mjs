// The asking server (`clarion mcp --ask-in ...`, MCPA-1..5) under the
// official TypeScript MCP SDK. Run by tests/it/doors_mcp_typescript.rs on
// both backends:
//
//   CLARION_BIN=target/debug/clarion CLARION_DATABASE_URL=... \
//   CLARION_SESSION=... CLARION_OTHER_ID=... CLARION_ENDED_SESSION=... \
//   node asking.mjs
//
// CLARION_SESSION is mirrored by the server itself (task, workspace, owner
// alice); CLARION_OTHER_ID is a bundle of another session,
// CLARION_ENDED_SESSION a session the host ended. The human is alice on
// the command line. Prints the answered bundle's result as JSON on its
// last line.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

import { BIN, URL, connect, listed, ok, refused, run } from './clarion.mjs';

const SESSION = process.env.CLARION_SESSION;
const OTHER_ID = process.env.CLARION_OTHER_ID;
const ENDED_SESSION = process.env.CLARION_ENDED_SESSION;
const TOOLS = ['ask_human', 'wait_for_answer', 'cancel_question'];

const QUESTIONS = [{
  title: 'Ship it?',
  prompt: 'Tests pass. Ship it?',
  options: [{ label: 'Yes', description: 'ship' }, { label: 'No', description: 'wait' }],
}];

/** Alice answers on the command line, another process. */
function answerAsAlice(pendingId, note) {
  execFileSync(BIN, [
    'answer', pendingId, '--database-url', URL, '--as', 'user:alice', '--answers',
    JSON.stringify([{ question_id: 'q1', selected_options: ['q1_opt1'], custom_text: note }]),
  ], { env: { ...process.env, RUST_LOG: 'off' }, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function asking() {
  const client = await connect('--ask-in', SESSION, '--task', `t-${SESSION}`,
    '--workspace', `w-${SESSION}`, '--owner', 'alice');
  try {
    await listed(client, TOOLS);
    const codes = [
      await refused(client, 'ask_human', { questions: [], wait_ms: 0 },
        'validation', 'questions: expected 1 to 4 questions, got 0'),
      await refused(client, 'ask_human', { questions: QUESTIONS, wait_ms: 'soon' },
        'validation', 'wait_ms: expected an integer, got a string'),
      await refused(client, 'wait_for_answer', { pending_id: 'no-such-bundle', wait_ms: 0 },
        'not_found', 'clarification request not found'),
      await refused(client, 'cancel_question', { pending_id: 'no-such-bundle' },
        'not_found', 'clarification request not found'),
      await refused(client, 'wait_for_answer', { pending_id: OTHER_ID, wait_ms: 0 },
        'not_found', 'clarification request not found'),
      await refused(client, 'cancel_question', { pending_id: OTHER_ID },
        'not_found', 'clarification request not found'),
    ];

    // Asked, pending, withdrawn.
    const withdrawn = await ok(client, 'ask_human', { questions: QUESTIONS, wait_ms: 0 });
    assert.deepEqual(withdrawn, { pending_id: withdrawn.pending_id, status: 'pending', retry_after_ms: 0 });
    const still = await ok(client, 'wait_for_answer', { pending_id: withdrawn.pending_id, wait_ms: 0 });
    assert.equal(still.status, 'pending', JSON.stringify(still));
    const cancelled = await ok(client, 'cancel_question', { pending_id: withdrawn.pending_id });
    assert.deepEqual(Object.keys(cancelled), ['pending_id', 'claimed', 'status', 'response', 'quorum']);
    assert.equal(cancelled.claimed, true);
    assert.equal(cancelled.status, 'cancelled');

    // Asked, answered by alice, received; a late cancel is beaten.
    const asked = await ok(client, 'ask_human', { questions: QUESTIONS, wait_ms: 0 });
    answerAsAlice(asked.pending_id, 'from the command line');
    const answered = await ok(client, 'wait_for_answer', { pending_id: asked.pending_id, wait_ms: 30000 });
    assert.deepEqual(Object.keys(answered), ['pending_id', 'status', 'response']);
    assert.equal(answered.status, 'answered');
    assert.equal(answered.response.answers[0].custom_text, 'from the command line');
    assert.equal(answered.response.decided_by, 'user');
    const beaten = await ok(client, 'cancel_question', { pending_id: asked.pending_id });
    assert.equal(beaten.claimed, false);
    assert.deepEqual(beaten.response, answered.response);
    return { codes, answered, withdrawn: withdrawn.pending_id };
  } finally {
    await client.close();
  }
}

/** Asking on a session the host ended (ASK-5). */
async function onAnEndedSession() {
  const client = await connect('--ask-in', ENDED_SESSION);
  try {
    await listed(client, TOOLS);
    return [
      await refused(client, 'ask_human', { questions: QUESTIONS, wait_ms: 0 },
        'session_ended', 'session has ended'),
    ];
  } finally {
    await client.close();
  }
}

run(async () => {
  const result = await asking();
  result.codes.push(...(await onAnEndedSession()));
  return result;
});
