// What the TypeScript MCP client scripts share: how to start `clarion mcp`
// under the official SDK's Client and StdioClientTransport, and how a tool
// result must look to it: a success's structuredContent (validated by the
// SDK against the tool's outputSchema once tools/list was called) equal to
// its text content; an error's text content `{"error", "code"}`, returned to
// the caller, never turned into an SDK exception.

import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

export const BIN = process.env.CLARION_BIN;
export const URL = process.env.CLARION_DATABASE_URL;

// Every warning the SDK (or the Ajv inside it: `unknown format "uint64"
// ignored in schema`) prints while compiling or checking schemas fails the run.
const warnings = [];
for (const level of ['warn', 'error']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    warnings.push(args.map(String).join(' '));
    original(...args);
  };
}

/** A connected client of `clarion mcp --database-url URL ...mode`. */
export async function connect(...mode) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: ['mcp', '--database-url', URL, ...mode],
    env: { ...process.env, RUST_LOG: 'off' },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'clarion-typescript-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

/**
 * tools/list, first, as every host does: the SDK keeps each tool's
 * outputSchema and checks every later result against it. Each input schema
 * is compiled with the SDK's validator too (hosts check arguments with it).
 */
export async function listed(client, names) {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), names);
  const validator = new AjvJsonSchemaValidator();
  for (const tool of tools) {
    validator.getValidator(tool.inputSchema);
    assert.ok(tool.outputSchema, `${tool.name} declares an outputSchema`);
  }
  return tools;
}

/** Calls a tool; an exception from the SDK fails with what was called. */
async function call(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (error) {
    throw new Error(
      `${name} ${JSON.stringify(args)}: the SDK threw instead of returning the result: ${error.message}`,
    );
  }
}

/** A successful result's structuredContent, equal to its text content. */
export async function ok(client, name, args) {
  const result = await call(client, name, args);
  assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result)}`);
  assert.equal(result.content[0]?.type, 'text', JSON.stringify(result));
  assert.ok(result.structuredContent, `${name}: no structuredContent`);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

/**
 * An error result (WIRE-4): isError true, its text content exactly
 * `{"error": error, "code": code}`. structuredContent, if any, must say the
 * same (and the SDK accepted it against the outputSchema). A failed check is
 * recorded and the run goes on, so one run shows every refusal that fails.
 */
export async function refused(client, name, args, code, error) {
  try {
    await refusal(client, name, args, code, error);
  } catch (failure) {
    failures.push(failure.message);
  }
  return code;
}

// Every refusal is checked, even after one failed; the run fails at its end.
const failures = [];

async function refusal(client, name, args, code, error) {
  const result = await call(client, name, args);
  assert.equal(result.isError, true, `${name}: ${JSON.stringify(result)}`);
  assert.equal(result.content[0]?.type, 'text', JSON.stringify(result));
  const body = JSON.parse(result.content[0].text);
  assert.deepEqual(body, { error, code }, `${name} ${JSON.stringify(args)}`);
  if (result.structuredContent !== undefined) {
    assert.deepEqual(result.structuredContent, body);
  }
}

/**
 * Runs `main`; prints its result as JSON on the last line, or the failures
 * and exit 1. Any warning printed meanwhile is a failure.
 */
export function run(main) {
  main()
    .then((result) => {
      if (warnings.length > 0) failures.push(`the SDK printed warnings: ${warnings.join('; ')}`);
      if (failures.length > 0) {
        process.stderr.write(`${failures.length} failed:\n${failures.join('\n---\n')}\n`);
        process.exit(1);
      }
      process.stdout.write(`${JSON.stringify(result)}\n`);
    })
    .catch((error) => {
      for (const failure of failures) process.stderr.write(`${failure}\n---\n`);
      process.stderr.write(`${error.stack ?? error}\n`);
      process.exit(1);
    });
}
