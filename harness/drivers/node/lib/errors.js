// A thrown value as the protocol's `error` object (docs/executor-protocol.md, section 7).
import { ProtocolError } from './codec.js';

function isDriverError(mongodb, error) {
  return error instanceof mongodb.MongoError || error instanceof mongodb.BSON.BSONError;
}

/** `driverError` for what the driver or server raised; the executor's own kinds otherwise. */
export function errorDocument(mongodb, error) {
  if (error instanceof ProtocolError) return { kind: error.kind, message: error.message };
  if (error?.kind === 'noChange') return { kind: 'noChange', message: error.message };
  if (!isDriverError(mongodb, error)) {
    return { kind: 'internal', message: String(error?.stack ?? error) };
  }
  const fromServer = error instanceof mongodb.MongoServerError;
  // Section 7's isTimeoutError: CSOT, server selection, a network timeout, or the server's MaxTimeMSExpired (50).
  const timeoutClasses = [
    mongodb.MongoOperationTimeoutError,
    mongodb.MongoServerSelectionError,
    mongodb.MongoNetworkTimeoutError,
  ].filter(Boolean);
  const document = {
    kind: 'driverError',
    message: error.message,
    type: error.constructor.name,
    code: typeof error.code === 'number' ? error.code : null,
    codeName: typeof error.codeName === 'string' ? error.codeName : null,
    errorLabels: Array.isArray(error.errorLabels) ? [...error.errorLabels] : [],
    isClientError: !fromServer,
    isNetworkError: error instanceof mongodb.MongoNetworkError,
    isTimeoutError: timeoutClasses.some((type) => error instanceof type) || (fromServer && error.code === 50),
  };
  if (fromServer && error.errorResponse != null) document.errorResponse = error.errorResponse;
  if (error instanceof mongodb.MongoBulkWriteError) document.errorResponse = bulkResponse(error);
  return document;
}

/**
 * Section 7's errorResponse for a bulk write error: Node keeps its write errors as `WriteError` objects (which
 * serialise as `{err: ...}`), so they are written back in the server's shape, `index` counted in the whole request.
 */
function bulkResponse(error) {
  const response = { ...(error.errorResponse ?? {}) };
  response.writeErrors = (error.writeErrors ?? []).map((entry) => {
    const raw = entry?.err ?? entry;
    const written = { index: raw.index, code: raw.code, errmsg: raw.errmsg };
    if (raw.errInfo != null) written.errInfo = raw.errInfo;
    return written;
  });
  return response;
}
