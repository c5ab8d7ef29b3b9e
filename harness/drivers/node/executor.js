#!/usr/bin/env node
// The harness's executor for the Node.js driver: docs/executor-protocol.md, on the npm `mongodb` package.
// stdin carries requests and stdout replies, one JSON line each; everything else goes to stderr.
import readline from 'node:readline';

import { invalidRequest, makeCodec, notImplemented, plainNumber } from './lib/codec.js';
import { driverModuleSpec, loadDriver } from './lib/driver.js';
import { Scope } from './lib/entities.js';
import { errorDocument } from './lib/errors.js';
import { ITERATION_MODES, iterationModeOf } from './lib/iteration.js';
import { EVENT_FAMILIES } from './lib/monitoring.js';
import { OPERATIONS, sessionState } from './lib/operations.js';

const PROTOCOL_VERSION = 1;
const FAST_HEARTBEAT_MS = 100;
// `command_log` is the protocol's own (section 6.4.2): the scope's command log and `run`'s `budgetMS`.
const CAPABILITIES = [
  'session_lsid',
  'session_state',
  'connections_checked_out',
  'cmap_events',
  'sdam_events',
  'command_log',
];

// Keep stdout for the protocol: a library's console output goes to stderr.
for (const method of ['log', 'info', 'debug', 'warn']) console[method] = console.error;

const { mongodb, version, minWireVersion } = loadDriver(driverModuleSpec(process.argv.slice(2), process.env));
const codec = makeCodec(mongodb.BSON);
const driver = { mongodb, codec };
const scopes = new Map();

function scopeOf(params) {
  const scope = scopes.get(params.scope);
  if (scope === undefined) throw invalidRequest(`no open scope ${JSON.stringify(params.scope)}`);
  return scope;
}

/**
 * One operation (also a nested one of withTransaction): checks its object, runs it, saves its result. `budgetMS`
 * is the `run` request's own (section 6.4.2): only `iterateUntilDocumentOrError` reads it, and a nested operation
 * never has one.
 */
async function runOperation(scope, operation, budgetMS = null) {
  const entry = OPERATIONS[operation.name];
  if (entry === undefined) throw notImplemented(`operation '${operation.name}' is not implemented`);
  const [kinds, implementation] = entry;
  const target = scope.get(operation.object, ...kinds);
  const context = { run: runOperation, budgetMS };
  const outcome = await implementation(scope, target, { ...(operation.arguments ?? {}) }, context);
  if (outcome.resultKind === 'entity') {
    // A driver object is kept even when unnamed (section 6.3): the reply says under which id.
    outcome.entity = operation.saveResultAsEntity ?? scope.unnamed();
    scope.put(outcome.entity, outcome.kind, outcome.object);
  } else if (operation.saveResultAsEntity != null) {
    scope.put(operation.saveResultAsEntity, 'value', outcome.result);
  }
  return outcome;
}

const METHODS = {
  hello: async () => ({
    plainResult: true,
    result: {
      protocolVersion: PROTOCOL_VERSION,
      driver: { name: 'node', version, language: 'javascript' },
      capabilities: CAPABILITIES,
      operations: Object.keys(OPERATIONS),
      fastHeartbeatMS: FAST_HEARTBEAT_MS,
      minWireVersion,
      iterationModes: ITERATION_MODES,
    },
  }),
  openScope: async (params) => {
    const id = params.scope;
    if (typeof id !== 'string') throw invalidRequest('openScope needs a string scope id');
    if (scopes.has(id)) throw invalidRequest(`scope ${JSON.stringify(id)} is already open`);
    const iterationTimeoutMS = plainNumber(params.iterationTimeoutMS);
    const heartbeatFrequencyMS = plainNumber(params.heartbeatFrequencyMS ?? null);
    // Section 5: one of hello's iterationModes (absent or null: the first); another one opens no scope.
    const iterationMode = iterationModeOf(params.iterationMode);
    scopes.set(id, new Scope(driver, { uri: params.uri, iterationTimeoutMS, heartbeatFrequencyMS, iterationMode }));
    return { result: null };
  },
  closeScope: async (params) => {
    const scope = scopes.get(params.scope);
    scopes.delete(params.scope);
    if (scope !== undefined) await scope.close();
    return { result: null };
  },
  createEntity: async (params) => {
    await scopeOf(params).create(params.entity);
    return { result: null };
  },
  run: async (params) => {
    const budgetMS = plainNumber(params.budgetMS ?? null);
    const outcome = await runOperation(scopeOf(params), params.operation ?? {}, budgetMS);
    const reply = { result: outcome.result };
    if (outcome.resultKind !== undefined) reply.resultKind = outcome.resultKind;
    if (outcome.entity !== undefined) reply.entity = outcome.entity;
    if (outcome.nested !== undefined) reply.nested = outcome.nested;
    return reply;
  },
  setEntity: async (params) => {
    scopeOf(params).rename(params.entity, params.id);
    return { result: null };
  },
  events: async (params) => {
    const monitor = scopeOf(params).monitor(params.client);
    if (!EVENT_FAMILIES.includes(params.eventType)) throw invalidRequest(`unknown eventType ${params.eventType}`);
    return { result: monitor.events[params.eventType] };
  },
  // Section 6.4.2: not draining; the harness keeps the count it has read and asks from there. A count past the
  // log's end is one the harness lost: refused, since `[]` would tell it nothing happened.
  commandLog: async (params) => {
    const { commandLog } = scopeOf(params);
    const from = plainNumber(params.from);
    if (!Number.isInteger(from) || from < 0) throw invalidRequest('commandLog needs from, an integer >= 0');
    if (from > commandLog.length) {
      throw invalidRequest(`commandLog from ${from} is past the log's end (${commandLog.length} entries)`);
    }
    return { result: commandLog.slice(from) };
  },
  sessionLsid: async (params) => {
    const scope = scopeOf(params);
    scope.get(params.session, 'session');
    return { result: scope.lsids.get(params.session) };
  },
  sessionState: async (params) => ({ result: sessionState(scopeOf(params).get(params.session, 'session')) }),
  connectionsCheckedOut: async (params) => ({
    result: new codec.Int32(scopeOf(params).monitor(params.client).checkedOut),
  }),
  echo: async (params) => ({ result: params.value }),
};

async function handle(line) {
  let request;
  try {
    request = codec.request(line);
  } catch (error) {
    console.error(`executor: unreadable request: ${error.message}`);
    return null;
  }
  try {
    const method = METHODS[request.method];
    if (method === undefined) throw notImplemented(`method '${request.method}' is not implemented`);
    const reply = await method(codec.decode(request.rawParams));
    return codec.reply(request.id, { ok: true, ...reply });
  } catch (error) {
    const reply = { ok: false, error: errorDocument(mongodb, error) };
    if (error?.nested !== undefined) reply.nested = error.nested;
    return codec.reply(request.id, reply);
  }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const reply = await handle(line);
    if (reply !== null) process.stdout.write(`${reply}\n`);
  }
  for (const scope of scopes.values()) await scope.close();
  scopes.clear();
  process.exit(0);
}

process.on('unhandledRejection', (reason) => console.error('executor: unhandled rejection:', reason));
main().catch((error) => {
  console.error('executor: fatal:', error);
  process.exit(1);
});
