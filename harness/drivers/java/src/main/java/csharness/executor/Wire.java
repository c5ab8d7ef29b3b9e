package csharness.executor;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * The encoding of section 2: a request is read with the driver's own Extended JSON parser (so canonical and
 * plain numbers are both accepted, and BSON types and key order survive); a reply is a plain-JSON envelope
 * whose BSON-valued fields (result, error, nested) are canonical Extended JSON, except hello's result, which
 * is plain JSON throughout.
 */
final class Wire {
    static final JsonWriterSettings CANONICAL = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();
    static final JsonWriterSettings PLAIN = JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();
    private static final String WRAPPER_START = "{\"v\": ";

    private Wire() {}

    /** The request on {@code line}, or null when the line is not one (not JSON, not an object, no integer id). */
    static Request parse(String line) {
        BsonDocument message;
        try {
            message = BsonDocument.parse(line);
        } catch (RuntimeException notAnObject) {
            return null;
        }
        Long id = integerId(message.get("id"));
        if (id == null) {
            return null;
        }
        BsonValue method = message.get("method");
        BsonValue params = message.get("params");
        return new Request(
                id,
                method != null && method.isString() ? method.asString().getValue() : null,
                params != null && params.isDocument() ? params.asDocument() : null);
    }

    private static Long integerId(BsonValue id) {
        if (id == null) {
            return null;
        }
        if (id.isInt32() || id.isInt64()) {
            return id.asNumber().longValue();
        }
        if (id.isDouble()) {
            double value = id.asDouble().getValue();
            return value == Math.rint(value) && !Double.isInfinite(value) ? (long) value : null;
        }
        return null;
    }

    /** One reply line (without its newline); {@code plainResult} for hello, whose result is plain JSON. */
    static String encode(long id, Reply reply, boolean plainResult) {
        StringBuilder line = new StringBuilder("{\"id\": ").append(id);
        line.append(", \"ok\": ").append(reply.ok());
        if (reply.ok()) {
            line.append(", \"result\": ").append(text(reply.result(), plainResult ? PLAIN : CANONICAL));
            if (reply.resultKind() != null) {
                line.append(", \"resultKind\": ").append(text(new BsonString(reply.resultKind()), PLAIN));
            }
            if (reply.entity() != null) {
                line.append(", \"entity\": ").append(text(new BsonString(reply.entity()), PLAIN));
            }
        } else {
            line.append(", \"error\": ").append(text(reply.error(), CANONICAL));
        }
        if (reply.nested() != null) {
            line.append(", \"nested\": ").append(text(reply.nested(), CANONICAL));
        }
        return line.append('}').toString();
    }

    /** One BSON value as JSON text in {@code settings}' mode (the driver's writer only writes documents). */
    static String text(BsonValue value, JsonWriterSettings settings) {
        String wrapped = new BsonDocument("v", value).toJson(settings);
        if (!wrapped.startsWith(WRAPPER_START) || !wrapped.endsWith("}")) {
            throw ExecutorError.internal("unexpected JSON writer output: " + wrapped);
        }
        return wrapped.substring(WRAPPER_START.length(), wrapped.length() - 1);
    }
}
