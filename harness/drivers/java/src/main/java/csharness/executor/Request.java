package csharness.executor;

import org.bson.BsonDocument;

/**
 * One request line, decoded: the integer id every reply must carry, the method (null when missing or not a
 * string) and the params object (null when missing or not an object); the dispatcher answers invalidRequest
 * for either.
 */
record Request(long id, String method, BsonDocument params) {}
