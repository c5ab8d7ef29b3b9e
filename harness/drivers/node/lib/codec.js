// The protocol's encoding (docs/executor-protocol.md, section 2): the envelope is plain JSON, every BSON value
// inside it canonical Extended JSON, decoded with the loaded driver's own `bson` so types survive both ways.

/** Failures of the request itself (section 7, `invalidRequest`) and unsupported features (`notImplemented`). */
export class ProtocolError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

export const invalidRequest = (message) => new ProtocolError('invalidRequest', message);
export const notImplemented = (message) => new ProtocolError('notImplemented', message);

const NUMBER_TYPES = new Set(['Int32', 'Double', 'Long']);

/** A BSON number wrapper (Int32, Double, Long) as a JS number; other values unchanged. */
export function plainNumber(value) {
  if (value != null && NUMBER_TYPES.has(value._bsontype)) return Number(value.valueOf?.() ?? value.toNumber());
  return value;
}

/** An options document with its numbers as JS numbers (drivers check `typeof x === 'number'` on options). */
export function plainOptions(value) {
  if (Array.isArray(value)) return value.map(plainOptions);
  if (value != null && typeof value === 'object' && value._bsontype === undefined) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plainOptions(inner)]));
  }
  return plainNumber(value);
}

export function makeCodec(BSON) {
  const { EJSON, Double, Int32, Long } = BSON;

  /** The BSON-typed JS value of a canonical Extended JSON value (plain JSON numbers become Int32/Double). */
  const decode = (value) => EJSON.deserialize(value ?? null, { relaxed: false });

  /** A value as canonical Extended JSON (as a JS object, ready for JSON.stringify). */
  const encode = (value) => {
    if (value === undefined) return null;
    return EJSON.serialize(value, { relaxed: false });
  };

  return {
    Double,
    Int32,
    Long,
    /** One request line -> `{id, method, rawParams}`; a line that is not a JSON object with an integer id throws. */
    request(line) {
      let message;
      try {
        message = JSON.parse(line);
      } catch (error) {
        throw invalidRequest(`request is not JSON: ${error.message}`);
      }
      if (message === null || typeof message !== 'object' || Array.isArray(message)) {
        throw invalidRequest('request is not a JSON object');
      }
      const id = plainNumber(decode(message.id ?? null));
      // No integer id, no reply (section 1): the line is logged to stderr by the caller.
      if (!Number.isInteger(id)) throw invalidRequest('request has no integer id');
      return { id, method: message.method, rawParams: message.params ?? {} };
    },
    /** A reply line (without its newline); `plainResult` marks a result that is plain JSON (the handshake's). */
    reply(id, { plainResult = false, ...fields }) {
      const out = { id };
      for (const [key, value] of Object.entries(fields)) {
        const bson = key === 'nested' || key === 'error' || (key === 'result' && !plainResult);
        out[key] = bson ? encode(value) : value;
      }
      return JSON.stringify(out);
    },
    decode,
    encode,
  };
}
