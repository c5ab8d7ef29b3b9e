// Scopes and the unified format's entities (docs/executor-protocol.md, sections 5 and 6.1), on the Node driver.
import { invalidRequest, notImplemented, plainOptions } from './codec.js';
import { ClientMonitor } from './monitoring.js';

const CLIENT_KEYS = new Set([
  'id',
  'uriOptions',
  'useMultipleMongoses',
  'observeEvents',
  'ignoreCommandMonitoringEvents',
  'observeSensitiveCommands',
  'storeEventsAsEntities',
]);
const DATABASE_KEYS = new Set(['id', 'client', 'databaseName', 'databaseOptions']);
const COLLECTION_KEYS = new Set(['id', 'database', 'collectionName', 'collectionOptions']);
const SESSION_KEYS = new Set(['id', 'client', 'sessionOptions']);
const SCOPE_CLOSE_WAIT_MS = 1500;

function refuseUnknownKeys(kind, spec, known) {
  const unknown = Object.keys(spec).filter((key) => !known.has(key));
  if (unknown.length > 0) throw notImplemented(`${kind} option(s) ${unknown.join(', ')} are not implemented`);
}

/** `uri` with `options` in its query string (an option given here replaces the URI's, whatever its case). */
export function uriWith(uri, options, firstHostOnly) {
  const [base, query = ''] = uri.split('?', 2);
  const schemeEnd = base.indexOf('://') + 3;
  const slash = base.indexOf('/', schemeEnd);
  let authority = slash === -1 ? base.slice(schemeEnd) : base.slice(schemeEnd, slash);
  const rest = slash === -1 ? '/' : base.slice(slash);
  if (firstHostOnly) {
    const at = authority.lastIndexOf('@');
    authority = authority.slice(0, at + 1) + authority.slice(at + 1).split(',')[0];
  }
  const overridden = new Set(Object.keys(options).map((key) => key.toLowerCase()));
  const kept = query.split('&').filter((pair) => pair && !overridden.has(pair.split('=')[0].toLowerCase()));
  for (const [key, value] of Object.entries(options)) {
    kept.push(`${encodeURIComponent(key)}=${encodeURIComponent(uriValue(key, value))}`);
  }
  return `${base.slice(0, schemeEnd)}${authority}${rest}${kept.length ? `?${kept.join('&')}` : ''}`;
}

function uriValue(key, value) {
  if (value !== null && typeof value === 'object') {
    if (key === 'readPreferenceTags') throw notImplemented('uriOptions.readPreferenceTags is not implemented');
    if (key === 'authMechanismProperties') {
      return Object.entries(value)
        .map(([name, inner]) => `${name}:${inner}`)
        .join(',');
    }
    throw notImplemented(`uriOptions.${key} with a document value is not implemented`);
  }
  return String(value);
}

/** The driver's read preference for the unified format's `{mode, tagSets?, maxStalenessSeconds?}`. */
export function readPreference(mongodb, spec) {
  if (spec == null) return undefined;
  const plain = plainOptions(spec);
  if (typeof plain === 'string') return mongodb.ReadPreference.fromString(plain);
  const options = plain.maxStalenessSeconds == null ? {} : { maxStalenessSeconds: plain.maxStalenessSeconds };
  return new mongodb.ReadPreference(plain.mode, plain.tagSets, options);
}

/** What Node's DbOptions and CollectionOptions take of the unified format's database/collection options. */
const ENTITY_OPTIONS = ['readConcern', 'writeConcern', 'readPreference', 'timeoutMS'];
/** What Node's TransactionOptions takes (no timeoutMS: a session's own is `defaultTimeoutMS`). */
export const TRANSACTION_OPTIONS = ['readConcern', 'writeConcern', 'readPreference', 'maxCommitTimeMS'];

/**
 * Database, collection or transaction options in the driver's shapes; a key not in `accepted` (what the driver's
 * options type for that object takes) is refused, since the driver would drop it unread.
 */
export function concernOptions(mongodb, spec, accepted) {
  const plain = plainOptions(spec ?? {});
  const options = {};
  for (const [key, value] of Object.entries(plain)) {
    if (!accepted.includes(key)) throw notImplemented(`option ${key} is not implemented`);
    options[key] = key === 'readPreference' ? readPreference(mongodb, value) : value;
  }
  return options;
}

/** One test's entities: `{kind, value}` by id, plus the monitors of its clients, its session lsids and the command
 * log its clients share. */
export class Scope {
  constructor(driver, params) {
    this.driver = driver;
    this.uri = params.uri;
    this.iterationTimeoutMS = params.iterationTimeoutMS;
    this.heartbeatFrequencyMS = params.heartbeatFrequencyMS;
    /** How the scope's change streams are consumed (section 6.4.1; lib/iteration.js). */
    this.iterationMode = params.iterationMode;
    this.entities = new Map();
    this.monitors = new Map();
    this.lsids = new Map();
    /** Every command event of the scope's clients in publication order (section 6.4.2); never trimmed. */
    this.commandLog = [];
  }

  get(id, ...kinds) {
    const entity = this.entities.get(id);
    if (entity === undefined) throw invalidRequest(`no entity ${JSON.stringify(id)} in this scope`);
    if (kinds.length > 0 && !kinds.includes(entity.kind)) {
      throw invalidRequest(`entity ${JSON.stringify(id)} is a ${entity.kind}, not a ${kinds.join(' or ')}`);
    }
    return entity.value;
  }

  kindOf(id) {
    return this.entities.get(id)?.kind;
  }

  put(id, kind, value) {
    if (this.entities.has(id)) throw invalidRequest(`entity ${JSON.stringify(id)} already exists`);
    this.entities.set(id, { kind, value });
  }

  /** An id for a driver object the harness did not name (section 6.3). */
  unnamed() {
    this.unnamedCount = (this.unnamedCount ?? 0) + 1;
    return `$executor${this.unnamedCount}`;
  }

  /** `setEntity`: the object kept as `from` is known as `to` from now on. */
  rename(from, to) {
    const entity = this.entities.get(from);
    if (entity === undefined) throw invalidRequest(`no entity ${JSON.stringify(from)} in this scope`);
    if (this.entities.has(to)) throw invalidRequest(`entity ${JSON.stringify(to)} already exists`);
    this.entities.delete(from);
    this.entities.set(to, entity);
  }

  monitor(id) {
    this.get(id, 'client');
    return this.monitors.get(id);
  }

  async create(description) {
    const kinds = Object.keys(description ?? {});
    if (kinds.length !== 1) throw invalidRequest('an entity description has exactly one key, its type');
    const [kind] = kinds;
    const spec = description[kind];
    const create = CREATE[kind];
    if (create === undefined) throw notImplemented(`entity type ${kind} is not implemented`);
    await create(this, spec);
  }

  /** Close change streams and cursors, end sessions, close clients; never fails (section 5). */
  async close() {
    const order = ['changeStream', 'cursor', 'session', 'client'];
    for (const kind of order) {
      for (const entity of this.entities.values()) {
        if (entity.kind !== kind) continue;
        const closing = kind === 'session' ? entity.value.endSession() : entity.value.close();
        await Promise.race([
          Promise.resolve(closing).catch(() => undefined),
          new Promise((resolve) => setTimeout(resolve, SCOPE_CLOSE_WAIT_MS).unref()),
        ]);
      }
    }
    this.entities.clear();
  }
}

async function createClient(scope, spec) {
  refuseUnknownKeys('client', spec, CLIENT_KEYS);
  if (spec.storeEventsAsEntities !== undefined) throw notImplemented('client.storeEventsAsEntities is not implemented');
  const uriOptions = plainOptions(spec.uriOptions ?? {});
  const lowered = new Set(Object.keys(uriOptions).map((key) => key.toLowerCase()));
  if (scope.heartbeatFrequencyMS != null && !lowered.has('heartbeatfrequencyms')) {
    uriOptions.heartbeatFrequencyMS = scope.heartbeatFrequencyMS;
    if (!lowered.has('minheartbeatfrequencyms')) uriOptions.minHeartbeatFrequencyMS = scope.heartbeatFrequencyMS;
  }
  const uri = uriWith(scope.uri, uriOptions, spec.useMultipleMongoses === false);
  // promoteLongs: false keeps an Int64 read from the server an Int64 (Long) instead of a JS number.
  const client = new scope.driver.mongodb.MongoClient(uri, { monitorCommands: true, promoteLongs: false });
  const monitor = new ClientMonitor(client, spec, scope.driver.codec, scope.commandLog);
  await client.connect();
  scope.put(spec.id, 'client', client);
  scope.monitors.set(spec.id, monitor);
}

async function createDatabase(scope, spec) {
  refuseUnknownKeys('database', spec, DATABASE_KEYS);
  const client = scope.get(spec.client, 'client');
  const options = concernOptions(scope.driver.mongodb, spec.databaseOptions, ENTITY_OPTIONS);
  scope.put(spec.id, 'database', client.db(spec.databaseName, options));
}

async function createCollection(scope, spec) {
  refuseUnknownKeys('collection', spec, COLLECTION_KEYS);
  const database = scope.get(spec.database, 'database');
  const options = concernOptions(scope.driver.mongodb, spec.collectionOptions, ENTITY_OPTIONS);
  scope.put(spec.id, 'collection', database.collection(spec.collectionName, options));
}

async function createSession(scope, spec) {
  refuseUnknownKeys('session', spec, SESSION_KEYS);
  const client = scope.get(spec.client, 'client');
  const { defaultTransactionOptions, ...rest } = plainOptions(spec.sessionOptions ?? {});
  const options = { ...rest };
  for (const key of Object.keys(rest)) {
    if (!['causalConsistency', 'snapshot', 'defaultTimeoutMS'].includes(key)) {
      throw notImplemented(`sessionOptions.${key} is not implemented`);
    }
  }
  if (defaultTransactionOptions !== undefined) {
    const { mongodb } = scope.driver;
    options.defaultTransactionOptions = concernOptions(mongodb, defaultTransactionOptions, TRANSACTION_OPTIONS);
  }
  const session = client.startSession(options);
  scope.put(spec.id, 'session', session);
  scope.lsids.set(spec.id, session.id);
}

const CREATE = {
  client: createClient,
  database: createDatabase,
  collection: createCollection,
  session: createSession,
};
