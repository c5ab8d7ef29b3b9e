// What a client observed (docs/executor-protocol.md, sections 6.1 and 6.6): the driver's own command, CMAP and
// SDAM events, recorded per family in publication order, with the fields the harness's comparators need.
import { EVENT_FAMILY, VOCABULARY } from './vocabulary.js';

/** Node's event name -> the unified format's event name; the family comes from the vocabulary. */
const EVENTS = {
  commandStarted: 'commandStartedEvent',
  commandSucceeded: 'commandSucceededEvent',
  commandFailed: 'commandFailedEvent',
  connectionPoolCreated: 'poolCreatedEvent',
  connectionPoolReady: 'poolReadyEvent',
  connectionPoolCleared: 'poolClearedEvent',
  connectionPoolClosed: 'poolClosedEvent',
  connectionCreated: 'connectionCreatedEvent',
  connectionReady: 'connectionReadyEvent',
  connectionClosed: 'connectionClosedEvent',
  connectionCheckOutStarted: 'connectionCheckOutStartedEvent',
  connectionCheckOutFailed: 'connectionCheckOutFailedEvent',
  connectionCheckedOut: 'connectionCheckedOutEvent',
  connectionCheckedIn: 'connectionCheckedInEvent',
  serverDescriptionChanged: 'serverDescriptionChangedEvent',
  topologyDescriptionChanged: 'topologyDescriptionChangedEvent',
  serverHeartbeatStarted: 'serverHeartbeatStartedEvent',
  serverHeartbeatSucceeded: 'serverHeartbeatSucceededEvent',
  serverHeartbeatFailed: 'serverHeartbeatFailedEvent',
  topologyOpening: 'topologyOpeningEvent',
  topologyClosed: 'topologyClosedEvent',
};

for (const kind of Object.values(EVENTS)) {
  if (!(kind in EVENT_FAMILY)) throw new Error(`the vocabulary names no event ${kind}`);
}

export const EVENT_FAMILIES = Object.keys(VOCABULARY.events);

/** Whether a command started event is one the test's entity leaves out (`ignoreCommandMonitoringEvents`).
 * Sensitive and internal commands are sent as they are: the harness leaves them out or blanks them (section 7.1). */
const ignored = (event, options) => options.ignored.has(event.commandName);

/** `{host, port}` descriptions carry more than the comparators use: only the SDAM type name crosses. */
const description = (value) => (value == null ? undefined : { type: value.type });

/** Always a document (section 6.6): a server's error as its reply (ok, errmsg, code, codeName...), any other
 * failure as `{errmsg, errtype}`. */
function failureOf(failure) {
  if (failure == null) return undefined;
  if (failure.errorResponse != null && typeof failure.errorResponse === 'object') return failure.errorResponse;
  if (typeof failure.code === 'number') {
    return { ok: 0, errmsg: failure.message, code: failure.code, codeName: failure.codeName ?? null };
  }
  const errmsg = failure instanceof Error ? failure.message : String(failure);
  return { errmsg, errtype: failure?.constructor?.name ?? 'Error' };
}

/** The protocol document of one event (fields the driver does not know are left out). */
function eventDocument(kind, family, event, codec) {
  const document = { kind };
  if (family === 'command') {
    document.commandName = event.commandName;
    document.databaseName = event.databaseName;
    document.requestId = new codec.Int32(event.requestId);
    if (event.operationId != null) document.operationId = new codec.Int32(event.operationId);
    if (event.serverConnectionId != null) document.serverConnectionId = codec.Long.fromBigInt(BigInt(event.serverConnectionId));
    if (event.serviceId != null) document.serviceId = event.serviceId;
    if (event.command !== undefined) document.command = event.command;
    if (event.reply !== undefined) document.reply = event.reply;
    if (event.failure !== undefined) document.failure = failureOf(event.failure);
    if (event.duration !== undefined) document.durationMS = new codec.Double(event.duration);
  } else if (family === 'cmap') {
    if (event.reason != null) document.reason = event.reason;
    if (event.serviceId != null) document.serviceId = event.serviceId;
  } else {
    if (event.previousDescription !== undefined) document.previousDescription = description(event.previousDescription);
    if (event.newDescription !== undefined) document.newDescription = description(event.newDescription);
    if (event.awaited !== undefined) document.awaited = event.awaited;
  }
  return document;
}

/**
 * Listen to everything a client publishes and keep what its entity observes. Connections checked out are
 * counted whatever is observed (`connectionsCheckedOut`). Every command event also goes to `commandLog`, the
 * scope's one list shared by all its clients (section 6.4.2), whatever the entity observes.
 */
export class ClientMonitor {
  constructor(client, spec, codec, commandLog) {
    this.codec = codec;
    this.clientId = spec.id;
    this.commandLog = commandLog;
    this.observed = new Set(spec.observeEvents ?? []);
    this.options = { ignored: new Set(spec.ignoreCommandMonitoringEvents ?? []) };
    this.events = { command: [], cmap: [], sdam: [] };
    this.skippedRequests = new Set();
    this.checkedOut = 0;
    for (const [name, kind] of Object.entries(EVENTS)) {
      client.on(name, (event) => this.record(EVENT_FAMILY[kind], kind, event));
    }
    client.on('connectionCheckedOut', () => (this.checkedOut += 1));
    client.on('connectionCheckedIn', () => (this.checkedOut -= 1));
  }

  record(family, kind, event) {
    if (family === 'command') {
      this.log(kind, event);
      if (kind === 'commandStartedEvent' && ignored(event, this.options)) this.skippedRequests.add(event.requestId);
      if (this.skippedRequests.has(event.requestId)) {
        if (kind !== 'commandStartedEvent') this.skippedRequests.delete(event.requestId);
        return;
      }
    }
    if (!this.observed.has(kind)) return;
    this.events[family].push(eventDocument(kind, family, event, this.codec));
  }

  /**
   * Append a command event to the scope's log, before any of the entity's filters. The driver publishes on the one
   * JavaScript thread, synchronously from its listeners, so appending here keeps the publication order across the
   * scope's clients with no lock to take. A document of its own: the per-client record's stays as it is.
   */
  log(kind, event) {
    const document = eventDocument(kind, 'command', event, this.codec);
    document.client = this.clientId;
    this.commandLog.push(document);
  }
}
