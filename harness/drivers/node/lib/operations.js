// The unified format's entity operations on the Node driver (docs/executor-protocol.md, sections 6.2-6.5),
// dispatched by the spec's own names. Each takes (scope, target, arguments, context) and returns
// `{result, resultKind?, nested?}`; arguments it does not consume are refused (`notImplemented`), never ignored.
import { notImplemented, plainNumber, plainOptions } from './codec.js';
import { TRANSACTION_OPTIONS, concernOptions, readPreference } from './entities.js';
import { errorDocument } from './errors.js';
import * as iteration from './iteration.js';

/** Arguments that are data even when scalar (section 2.1): handed to the driver with their BSON types. */
const DATA_SCALARS = new Set(['comment', 'hint']);
/** The options documents of section 2.1, whose numbers become JS numbers (Node checks `typeof w === 'number'`). */
const OPTION_DOCUMENTS = new Set(['readConcern', 'writeConcern']);
/** What (almost) every operation's options type takes: `session`, `timeoutMS` and `comment`. */
const COMMON = ['session', 'timeoutMS', 'comment'];
const CHANGE_STREAM_OPTIONS = [
  ...COMMON,
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
// Each list below names what the pinned driver's options type for that method declares (mongodb.d.ts), so the
// executor hands every argument it accepts to the driver; the rest is refused (section 6.2).
const INSERT_ONE_OPTIONS = [...COMMON, 'bypassDocumentValidation', 'collation', 'writeConcern'];
const INSERT_MANY_OPTIONS = [...INSERT_ONE_OPTIONS, 'let', 'ordered'];
const DELETE_OPTIONS = [...COMMON, 'collation', 'hint', 'let', 'ordered', 'writeConcern'];
const UPDATE_SHARED_OPTIONS = [
  ...COMMON,
  'bypassDocumentValidation',
  'collation',
  'hint',
  'let',
  'upsert',
  'writeConcern',
];
const UPDATE_MANY_OPTIONS = [...UPDATE_SHARED_OPTIONS, 'arrayFilters'];
const UPDATE_ONE_OPTIONS = [...UPDATE_MANY_OPTIONS, 'sort'];
const REPLACE_OPTIONS = [...UPDATE_SHARED_OPTIONS, 'sort'];
const FIND_ONE_AND_DELETE_OPTIONS = [
  ...COMMON,
  'collation',
  'hint',
  'let',
  'maxTimeMS',
  'projection',
  'sort',
  'writeConcern',
];
const FIND_ONE_AND_REPLACE_OPTIONS = [
  ...FIND_ONE_AND_DELETE_OPTIONS,
  'bypassDocumentValidation',
  'returnDocument',
  'upsert',
];
const FIND_ONE_AND_UPDATE_OPTIONS = [...FIND_ONE_AND_REPLACE_OPTIONS, 'arrayFilters'];
const FIND_OPTIONS = [
  ...COMMON,
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
  ...COMMON,
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
const CREATE_COLLECTION_OPTIONS = [
  ...COMMON,
  'capped',
  'size',
  'max',
  'storageEngine',
  'validator',
  'validationLevel',
  'validationAction',
  'indexOptionDefaults',
  'viewOn',
  'pipeline',
  'changeStreamPreAndPostImages',
  'clusteredIndex',
  'expireAfterSeconds',
  'timeseries',
  'encryptedFields',
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

/** Refuse the first argument not in `accepted` (section 6.2): an argument the executor would drop is never run. */
function refuseOthers(args, accepted) {
  const refused = Object.keys(args).filter((key) => !accepted.includes(key));
  if (refused.length > 0) throw notImplemented(`argument ${refused[0]} is not implemented for this operation`);
}

const isDocumentOrArray = (value) =>
  Array.isArray(value) || (value !== null && typeof value === 'object' && value._bsontype === undefined);

/**
 * One argument as the driver takes it (section 2.1). Data keeps its BSON types: every document or array (a
 * validator, a pipeline, a sort...), `comment` and `hint`, and with `asGiven` every value the driver copies into its
 * command as it is (createCollection's), so a Double stays a Double. Options' numbers become JS numbers, which
 * Node demands (`typeof batchSize === 'number'`).
 */
function optionValue(scope, key, value, asGiven) {
  if (key === 'session') return scope.get(value, 'session');
  if (key === 'readPreference') return readPreference(scope.driver.mongodb, value);
  if (OPTION_DOCUMENTS.has(key)) return plainOptions(value);
  if (key === 'timeoutMS') return plainNumber(value);
  if (asGiven || DATA_SCALARS.has(key) || isDocumentOrArray(value)) return value;
  return plainNumber(value);
}

/** The remaining arguments as the driver's options object; one not in `accepted` is `notImplemented`. */
function options(scope, args, accepted, { asGiven = false } = {}) {
  refuseOthers(args, accepted);
  const out = {};
  for (const [key, argument] of Object.entries(args)) out[key] = optionValue(scope, key, argument, asGiven);
  for (const key of Object.keys(args)) delete args[key];
  return out;
}

const value = (result) => ({ result: result ?? null });
const documents = (result) => ({ result, resultKind: 'documents' });
const entity = (object, kind) => ({ result: null, resultKind: 'entity', object, kind });

const deleteResult = (result) => ({ deletedCount: result.deletedCount });

function updateResult(result) {
  const shaped = {
    matchedCount: result.matchedCount,
    modifiedCount: result.modifiedCount,
    upsertedCount: result.upsertedCount,
  };
  if (result.upsertedId != null) shaped.upsertedId = result.upsertedId;
  return shaped;
}

/** Section 6.4, in the scope's iteration mode (section 6.4.1, lib/iteration.js), under the request's `budgetMS`
 * when the harness sent one (section 6.4.2; `run` hands it over in the context). */
async function iterateUntilDocumentOrError(scope, target, args, context) {
  refuseOthers(args, []);
  return value(await iteration.untilDocumentOrError(scope, target, context.budgetMS));
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

function write(method, positional, accepted, shape) {
  return async (scope, target, args) => {
    const values = positional.map((key) => take(args, key));
    return value(shape(await target[method](...values, options(scope, args, accepted))));
  };
}

function findOneAnd(method, positional, accepted) {
  return async (scope, target, args) => {
    const values = positional.map((key) => take(args, key));
    const opts = options(scope, args, accepted);
    // The unified format says Before/After; Node's ReturnDocument is 'before'/'after'.
    if (opts.returnDocument !== undefined) opts.returnDocument = String(opts.returnDocument).toLowerCase();
    return value(await target[method](...values, opts));
  };
}

/**
 * Section 6.4: `close` answers null whatever the driver raises while closing (a failed killCursors, a broken
 * connection): the unified format's runners suppress it, and a test that cares asserts on the killCursors events.
 * The error goes to stderr.
 */
async function close(scope, target, args) {
  refuseOthers(args, []);
  try {
    await target.close();
  } catch (error) {
    const what = error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
    console.error(`executor: close: the driver's error is swallowed: ${what}`);
  }
  return value(null);
}

/** Node's commitTransaction, abortTransaction and endSession take `{timeoutMS}` only. */
function sessionCall(method) {
  return async (scope, session, args) => value(await session[method](options(scope, args, ['timeoutMS'])));
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
  // withTransaction takes TransactionOptions and a timeoutMS of its own; startTransaction has no timeoutMS.
  const opts = concernOptions(scope.driver.mongodb, args, [...TRANSACTION_OPTIONS, 'timeoutMS']);
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
  iterateUntilDocumentOrError: [['changeStream', 'cursor'], iterateUntilDocumentOrError],
  iterateOnce: [
    ['changeStream', 'cursor'],
    async (scope, target, args) => {
      refuseOthers(args, []);
      return value(await iteration.once(scope, target));
    },
  ],
  getResumeToken: [
    ['changeStream'],
    async (scope, target, args) => {
      refuseOthers(args, []);
      return value(target.resumeToken);
    },
  ],
  close: [['changeStream', 'cursor', 'client'], close],

  insertOne: [
    ['collection'],
    write('insertOne', ['document'], INSERT_ONE_OPTIONS, (r) => ({ insertedId: r.insertedId })),
  ],
  insertMany: [
    ['collection'],
    write('insertMany', ['documents'], INSERT_MANY_OPTIONS, (r) => ({
      insertedCount: r.insertedCount,
      insertedIds: r.insertedIds,
    })),
  ],
  updateOne: [['collection'], write('updateOne', ['filter', 'update'], UPDATE_ONE_OPTIONS, updateResult)],
  updateMany: [['collection'], write('updateMany', ['filter', 'update'], UPDATE_MANY_OPTIONS, updateResult)],
  replaceOne: [['collection'], write('replaceOne', ['filter', 'replacement'], REPLACE_OPTIONS, updateResult)],
  deleteOne: [['collection'], write('deleteOne', ['filter'], DELETE_OPTIONS, deleteResult)],
  deleteMany: [['collection'], write('deleteMany', ['filter'], DELETE_OPTIONS, deleteResult)],
  findOneAndUpdate: [
    ['collection'],
    findOneAnd('findOneAndUpdate', ['filter', 'update'], FIND_ONE_AND_UPDATE_OPTIONS),
  ],
  findOneAndReplace: [
    ['collection'],
    findOneAnd('findOneAndReplace', ['filter', 'replacement'], FIND_ONE_AND_REPLACE_OPTIONS),
  ],
  findOneAndDelete: [['collection'], findOneAnd('findOneAndDelete', ['filter'], FIND_ONE_AND_DELETE_OPTIONS)],
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
      const accepted = [...COMMON, 'collation', 'hint', 'limit', 'maxTimeMS', 'skip', 'readConcern', 'readPreference'];
      return value(await target.countDocuments(filter, options(scope, args, accepted)));
    },
  ],
  estimatedDocumentCount: [
    ['collection'],
    async (scope, target, args) => {
      const accepted = [...COMMON, 'maxTimeMS', 'readConcern', 'readPreference'];
      return value(await target.estimatedDocumentCount(options(scope, args, accepted)));
    },
  ],
  distinct: [
    ['collection'],
    async (scope, target, args) => {
      const field = take(args, 'fieldName');
      const filter = take(args, 'filter');
      const accepted = [...COMMON, 'collation', 'hint', 'maxTimeMS', 'readConcern', 'readPreference'];
      return value(await target.distinct(field, filter, options(scope, args, accepted)));
    },
  ],
  createIndex: [
    ['collection'],
    async (scope, target, args) => {
      const keys = take(args, 'keys');
      const accepted = [...COMMON, 'name', 'unique', 'sparse', 'expireAfterSeconds', 'hidden', 'commitQuorum'];
      return value(await target.createIndex(keys, options(scope, args, accepted)));
    },
  ],
  dropIndex: [
    ['collection'],
    async (scope, target, args) => {
      const name = take(args, 'name');
      await target.dropIndex(name, options(scope, args, [...COMMON, 'maxTimeMS', 'writeConcern']));
      return value(null);
    },
  ],
  listIndexes: [
    ['collection'],
    async (scope, target, args) =>
      documents(await target.listIndexes(options(scope, args, [...COMMON, 'batchSize'])).toArray()),
  ],
  rename: [
    ['collection'],
    async (scope, target, args) => {
      const to = take(args, 'to');
      await target.rename(to, options(scope, args, [...COMMON, 'dropTarget']));
      return value(null);
    },
  ],
  drop: [
    ['collection'],
    async (scope, target, args) => {
      await target.drop(options(scope, args, [...COMMON, 'writeConcern']));
      return value(null);
    },
  ],
  createCollection: [
    ['database'],
    async (scope, target, args) => {
      const name = take(args, 'collection');
      // Node copies these options into the `create` command as they are: they reach the server with their types.
      await target.createCollection(name, options(scope, args, CREATE_COLLECTION_OPTIONS, { asGiven: true }));
      return value(null);
    },
  ],
  dropCollection: [
    ['database'],
    async (scope, target, args) => {
      const name = take(args, 'collection');
      await target.dropCollection(name, options(scope, args, [...COMMON, 'writeConcern', 'encryptedFields']));
      return value(null);
    },
  ],
  listCollections: [
    ['database'],
    async (scope, target, args) => {
      const filter = takeOptional(args, 'filter', {});
      const accepted = [...COMMON, 'batchSize', 'nameOnly', 'authorizedCollections'];
      return documents(await target.listCollections(filter, options(scope, args, accepted)).toArray());
    },
  ],
  listCollectionNames: [
    ['database'],
    async (scope, target, args) => {
      const filter = takeOptional(args, 'filter', {});
      const opts = { ...options(scope, args, [...COMMON, 'batchSize', 'authorizedCollections']), nameOnly: true };
      const found = await target.listCollections(filter, opts).toArray();
      return value(found.map((collection) => collection.name));
    },
  ],
  dropDatabase: [
    ['database'],
    async (scope, target, args) => {
      await target.dropDatabase(options(scope, args, [...COMMON, 'writeConcern']));
      return value(null);
    },
  ],
  runCommand: [
    ['database'],
    async (scope, target, args) => {
      const command = take(args, 'command');
      // commandName is for languages whose maps lose key order; a JS object keeps the command's name first.
      takeOptional(args, 'commandName', undefined);
      // Node's RunCommandOptions has no comment: the command document carries one itself.
      return value(await target.command(command, options(scope, args, ['session', 'timeoutMS', 'readPreference'])));
    },
  ],

  startTransaction: [
    ['session'],
    async (scope, session, args) => {
      const opts = concernOptions(scope.driver.mongodb, args, TRANSACTION_OPTIONS);
      for (const key of Object.keys(args)) delete args[key];
      session.startTransaction(opts);
      return value(null);
    },
  ],
  commitTransaction: [['session'], sessionCall('commitTransaction')],
  abortTransaction: [['session'], sessionCall('abortTransaction')],
  endSession: [['session'], sessionCall('endSession')],
  withTransaction: [['session'], withTransaction],
};
