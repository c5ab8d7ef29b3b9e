// The unified format's entity operations on the Node driver (docs/executor-protocol.md, sections 6.2-6.5),
// dispatched by the spec's own names. Each takes (scope, target, arguments, context) and returns
// `{result, resultKind?, nested?}`; arguments it does not consume are refused (`notImplemented`), never ignored.
import { notImplemented, plainOptions } from './codec.js';
import { concernOptions, readPreference } from './entities.js';
import { errorDocument } from './errors.js';

/** Option values that are BSON documents or values and go to the driver as they are. */
const DOCUMENT_OPTIONS = new Set([
  'hint',
  'sort',
  'projection',
  'let',
  'collation',
  'resumeAfter',
  'startAfter',
  'startAtOperationTime',
  'arrayFilters',
  'comment',
  'min',
  'max',
]);
const ENTITY_OPTIONS = ['session', 'timeoutMS', 'comment'];
const CHANGE_STREAM_OPTIONS = [
  'fullDocument',
  'fullDocumentBeforeChange',
  'resumeAfter',
  'startAfter',
  'startAtOperationTime',
  'batchSize',
  'maxAwaitTimeMS',
  'showExpandedEvents',
  'collation',
  'readConcern',
  'readPreference',
];
const WRITE_OPTIONS = ['bypassDocumentValidation', 'collation', 'hint', 'let', 'writeConcern'];
const UPDATE_OPTIONS = [...WRITE_OPTIONS, 'upsert', 'arrayFilters', 'sort'];
const FIND_OPTIONS = [
  'allowDiskUse',
  'allowPartialResults',
  'batchSize',
  'collation',
  'hint',
  'let',
  'limit',
  'max',
  'maxTimeMS',
  'min',
  'noCursorTimeout',
  'projection',
  'returnKey',
  'showRecordId',
  'singleBatch',
  'skip',
  'sort',
  'readConcern',
  'readPreference',
];
const AGGREGATE_OPTIONS = [
  'allowDiskUse',
  'batchSize',
  'bypassDocumentValidation',
  'collation',
  'hint',
  'let',
  'maxAwaitTimeMS',
  'maxTimeMS',
  'readConcern',
  'readPreference',
  'writeConcern',
];

/** Remove and return a required argument. */
function take(args, key) {
  if (!(key in args)) throw notImplemented(`missing argument ${key}`);
  const value = args[key];
  delete args[key];
  return value;
}

function takeOptional(args, key, fallback) {
  if (!(key in args)) return fallback;
  const value = args[key];
  delete args[key];
  return value;
}

/** The remaining arguments as the driver's options object; one it does not take is `notImplemented`. */
function options(scope, args, allowed = []) {
  const out = {};
  for (const [key, value] of Object.entries(args)) {
    if (!allowed.includes(key) && !ENTITY_OPTIONS.includes(key)) {
      throw notImplemented(`argument ${key} is not implemented for this operation`);
    }
    if (key === 'session') out.session = scope.get(value, 'session');
    else if (key === 'readPreference') out.readPreference = readPreference(scope.driver.mongodb, value);
    else if (DOCUMENT_OPTIONS.has(key)) out[key] = value;
    else out[key] = plainOptions(value);
  }
  for (const key of Object.keys(args)) delete args[key];
  return out;
}

const value = (result) => ({ result: result ?? null });
const documents = (result) => ({ result, resultKind: 'documents' });
const entity = (object, kind) => ({ result: null, resultKind: 'entity', object, kind });

function updateResult(result) {
  const shaped = {
    matchedCount: result.matchedCount,
    modifiedCount: result.modifiedCount,
    upsertedCount: result.upsertedCount,
  };
  if (result.upsertedId != null) shaped.upsertedId = result.upsertedId;
  return shaped;
}

/**
 * An iteration the budget gave up on keeps running (a promise cannot be cancelled); it is kept here per stream or
 * cursor until its outcome is taken, by the next iteration first, so a change it brings is not lost (section 6.4:
 * a stream that ran out of budget stays usable).
 */
const unfinished = new WeakMap();

/**
 * The next document of a change stream or cursor after at most one getMore, or null; with `timeout` (a promise
 * of TIMED_OUT), TIMED_OUT when that comes first, the iteration then left running for the next call.
 */
async function tryNext(target, timeout = null) {
  let attempt = unfinished.get(target);
  if (attempt === undefined) {
    attempt = target.tryNext();
    unfinished.set(target, attempt);
  }
  let next;
  try {
    next = await (timeout === null ? attempt : Promise.race([attempt, timeout]));
  } catch (error) {
    unfinished.delete(target);
    throw error;
  }
  if (next !== TIMED_OUT) unfinished.delete(target);
  return next ?? null;
}

function timeoutAfter(ms) {
  let timer;
  const promise = new Promise((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}
const TIMED_OUT = Symbol('timed out');

async function iterateUntilDocumentOrError(scope, target) {
  const budgetMS = scope.iterationTimeoutMS;
  const deadline = Date.now() + budgetMS;
  while (true) {
    const remaining = deadline - Date.now();
    const timer = timeoutAfter(Math.max(0, remaining));
    let next;
    try {
      next = await tryNext(target, timer.promise);
    } finally {
      timer.cancel();
    }
    if (next !== null && next !== TIMED_OUT) return value(next);
    // Section 6.4: a stream or cursor the server closed (cursor id 0, after an invalidate) has nothing more to give.
    const closed = next === null && target.closed === true;
    if (closed || next === TIMED_OUT || Date.now() >= deadline) {
      const why = closed ? 'the server closed the cursor' : `no document arrived within ${budgetMS / 1000}s`;
      const error = new Error(why);
      error.kind = 'noChange';
      throw error;
    }
  }
}

/** Node's change streams start lazily; the spec has `createChangeStream` run the aggregate (as Node's own runner). */
async function createChangeStream(scope, target, args) {
  const pipeline = takeOptional(args, 'pipeline', []);
  const stream = target.watch(pipeline, options(scope, args, CHANGE_STREAM_OPTIONS));
  if (typeof stream.cursor?.cursorInit === 'function') {
    try {
      await stream.cursor.cursorInit();
    } catch (error) {
      await stream.close().catch(() => undefined);
      throw error;
    }
  }
  return entity(stream, 'changeStream');
}

function write(method, positional, shape) {
  return async (scope, target, args) => {
    const values = positional.map((key) => take(args, key));
    const result = await target[method](...values, options(scope, args, method.startsWith('update') || method === 'replaceOne' ? UPDATE_OPTIONS : WRITE_OPTIONS.concat(['ordered'])));
    return value(shape(result));
  };
}

function findOneAnd(method, positional) {
  return async (scope, target, args) => {
    const values = positional.map((key) => take(args, key));
    const returnDocument = takeOptional(args, 'returnDocument', undefined);
    const opts = options(scope, args, [...UPDATE_OPTIONS, 'projection', 'maxTimeMS']);
    if (returnDocument !== undefined) opts.returnDocument = String(returnDocument).toLowerCase();
    return value(await target[method](...values, opts));
  };
}

const SESSION_STATES = {
  NO_TRANSACTION: 'none',
  STARTING_TRANSACTION: 'starting',
  TRANSACTION_IN_PROGRESS: 'in_progress',
  TRANSACTION_COMMITTED: 'committed',
  TRANSACTION_COMMITTED_EMPTY: 'committed',
  TRANSACTION_ABORTED: 'aborted',
};

/** The driver's session as the protocol's `sessionState` (section 6.6). */
export function sessionState(session) {
  const state = SESSION_STATES[session.transaction.state];
  if (state === undefined) throw new Error(`unknown transaction state ${session.transaction.state}`);
  return { transactionState: state, pinned: Boolean(session.isPinned), dirty: Boolean(session.serverSession?.isDirty) };
}

async function withTransaction(scope, session, args, context) {
  const callback = take(args, 'callback');
  const opts = concernOptions(scope.driver.mongodb, args);
  for (const key of Object.keys(args)) delete args[key];
  const nested = [];
  let attempt = 0;
  try {
    await session.withTransaction(async () => {
      attempt += 1;
      for (const [index, operation] of callback.entries()) {
        try {
          const outcome = await context.run(scope, operation);
          nested.push({ attempt, index, ok: true, result: outcome.result });
        } catch (error) {
          nested.push({ attempt, index, ok: false, error: errorDocument(scope.driver.mongodb, error) });
          throw error;
        }
      }
    }, opts);
  } catch (error) {
    error.nested = nested;
    throw error;
  }
  return { result: null, nested };
}

/** Operation name -> the entity kinds it runs on and its implementation. */
export const OPERATIONS = {
  createChangeStream: [['client', 'database', 'collection'], createChangeStream],
  iterateUntilDocumentOrError: [['changeStream', 'cursor'], (scope, target) => iterateUntilDocumentOrError(scope, target)],
  iterateOnce: [['changeStream', 'cursor'], async (scope, target) => value(await tryNext(target))],
  getResumeToken: [['changeStream'], async (scope, target) => value(target.resumeToken)],
  close: [['changeStream', 'cursor', 'client'], async (scope, target) => value(await target.close())],

  insertOne: [['collection'], write('insertOne', ['document'], (r) => ({ insertedId: r.insertedId }))],
  insertMany: [
    ['collection'],
    write('insertMany', ['documents'], (r) => ({ insertedCount: r.insertedCount, insertedIds: r.insertedIds })),
  ],
  updateOne: [['collection'], write('updateOne', ['filter', 'update'], updateResult)],
  updateMany: [['collection'], write('updateMany', ['filter', 'update'], updateResult)],
  replaceOne: [['collection'], write('replaceOne', ['filter', 'replacement'], updateResult)],
  deleteOne: [['collection'], write('deleteOne', ['filter'], (r) => ({ deletedCount: r.deletedCount }))],
  deleteMany: [['collection'], write('deleteMany', ['filter'], (r) => ({ deletedCount: r.deletedCount }))],
  findOneAndUpdate: [['collection'], findOneAnd('findOneAndUpdate', ['filter', 'update'])],
  findOneAndReplace: [['collection'], findOneAnd('findOneAndReplace', ['filter', 'replacement'])],
  findOneAndDelete: [['collection'], findOneAnd('findOneAndDelete', ['filter'])],
  find: [
    ['collection'],
    async (scope, target, args) => {
      const filter = takeOptional(args, 'filter', {});
      return documents(await target.find(filter, options(scope, args, FIND_OPTIONS)).toArray());
    },
  ],
  aggregate: [
    ['collection', 'database'],
    async (scope, target, args) => {
      const pipeline = take(args, 'pipeline');
      return documents(await target.aggregate(pipeline, options(scope, args, AGGREGATE_OPTIONS)).toArray());
    },
  ],
  countDocuments: [
    ['collection'],
    async (scope, target, args) => {
      const filter = take(args, 'filter');
      return value(await target.countDocuments(filter, options(scope, args, ['collation', 'hint', 'limit', 'maxTimeMS', 'skip', 'readConcern', 'readPreference'])));
    },
  ],
  estimatedDocumentCount: [
    ['collection'],
    async (scope, target, args) => value(await target.estimatedDocumentCount(options(scope, args, ['maxTimeMS', 'readConcern', 'readPreference']))),
  ],
  distinct: [
    ['collection'],
    async (scope, target, args) => {
      const field = take(args, 'fieldName');
      const filter = take(args, 'filter');
      return value(await target.distinct(field, filter, options(scope, args, ['collation', 'hint', 'maxTimeMS', 'readConcern', 'readPreference'])));
    },
  ],
  createIndex: [
    ['collection'],
    async (scope, target, args) => {
      const keys = take(args, 'keys');
      return value(await target.createIndex(keys, options(scope, args, ['name', 'unique', 'sparse', 'expireAfterSeconds', 'hidden', 'commitQuorum'])));
    },
  ],
  dropIndex: [
    ['collection'],
    async (scope, target, args) => {
      const name = take(args, 'name');
      await target.dropIndex(name, options(scope, args, ['maxTimeMS', 'writeConcern']));
      return value(null);
    },
  ],
  listIndexes: [
    ['collection'],
    async (scope, target, args) => documents(await target.listIndexes(options(scope, args, ['batchSize'])).toArray()),
  ],
  rename: [
    ['collection'],
    async (scope, target, args) => {
      const to = take(args, 'to');
      await target.rename(to, options(scope, args, ['dropTarget']));
      return value(null);
    },
  ],
  drop: [
    ['collection'],
    async (scope, target, args) => {
      await target.drop(options(scope, args, ['writeConcern']));
      return value(null);
    },
  ],
  createCollection: [
    ['database'],
    async (scope, target, args) => {
      const name = take(args, 'collection');
      const allowed = ['capped', 'size', 'max', 'storageEngine', 'validator', 'validationLevel', 'validationAction', 'indexOptionDefaults', 'viewOn', 'pipeline', 'changeStreamPreAndPostImages', 'clusteredIndex', 'expireAfterSeconds', 'timeseries', 'encryptedFields', 'writeConcern'];
      await target.createCollection(name, options(scope, args, allowed));
      return value(null);
    },
  ],
  dropCollection: [
    ['database'],
    async (scope, target, args) => {
      const name = take(args, 'collection');
      await target.dropCollection(name, options(scope, args, ['writeConcern', 'encryptedFields']));
      return value(null);
    },
  ],
  listCollections: [
    ['database'],
    async (scope, target, args) => {
      const filter = takeOptional(args, 'filter', {});
      return documents(await target.listCollections(filter, options(scope, args, ['batchSize', 'nameOnly', 'authorizedCollections'])).toArray());
    },
  ],
  listCollectionNames: [
    ['database'],
    async (scope, target, args) => {
      const filter = takeOptional(args, 'filter', {});
      const found = await target.listCollections(filter, { ...options(scope, args, ['batchSize', 'authorizedCollections']), nameOnly: true }).toArray();
      return value(found.map((collection) => collection.name));
    },
  ],
  dropDatabase: [
    ['database'],
    async (scope, target, args) => {
      await target.dropDatabase(options(scope, args, ['writeConcern']));
      return value(null);
    },
  ],
  runCommand: [
    ['database'],
    async (scope, target, args) => {
      const command = take(args, 'command');
      takeOptional(args, 'commandName', undefined);
      return value(await target.command(command, options(scope, args, ['readPreference'])));
    },
  ],

  startTransaction: [
    ['session'],
    async (scope, session, args) => {
      const opts = concernOptions(scope.driver.mongodb, args);
      for (const key of Object.keys(args)) delete args[key];
      session.startTransaction(opts);
      return value(null);
    },
  ],
  commitTransaction: [['session'], async (scope, session, args) => value(await session.commitTransaction(options(scope, args)))],
  abortTransaction: [['session'], async (scope, session, args) => value(await session.abortTransaction(options(scope, args)))],
  endSession: [['session'], async (scope, session) => value(await session.endSession())],
  withTransaction: [['session'], withTransaction],
};
