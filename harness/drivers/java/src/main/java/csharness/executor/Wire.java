package csharness.executor;

import java.io.Writer;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.EncoderContext;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriter;
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
    private static final BsonValueCodec VALUES = new BsonValueCodec();
    private static final EncoderContext CONTEXT = EncoderContext.builder().build();

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
            append(line.append(", \"result\": "), reply.result(), plainResult ? PLAIN : CANONICAL);
            if (reply.resultKind() != null) {
                append(line.append(", \"resultKind\": "), new BsonString(reply.resultKind()), PLAIN);
            }
            if (reply.entity() != null) {
                append(line.append(", \"entity\": "), new BsonString(reply.entity()), PLAIN);
            }
        } else {
            append(line.append(", \"error\": "), reply.error(), CANONICAL);
        }
        if (reply.nested() != null) {
            append(line.append(", \"nested\": "), reply.nested(), CANONICAL);
        }
        return line.append('}').toString();
    }

    /**
     * Appends one BSON value as JSON text in {@code settings}' mode to {@code line}. The driver's writer only writes
     * documents, so the value is written as a one-key document whose wrapper is then cut off, straight into the line:
     * a reply can hold several 16 MB server replies (events, commandLog), and BsonDocument.toJson writes through a
     * StringWriter, whose StringBuffer takes a lock on every character, then copies the text twice more.
     */
    private static StringBuilder append(StringBuilder line, BsonValue value, JsonWriterSettings settings) {
        int start = line.length();
        JsonWriter writer = new JsonWriter(new Appender(line), settings);
        writer.writeStartDocument();
        writer.writeName("v");
        VALUES.encode(writer, value == null ? BsonNull.VALUE : value, CONTEXT);
        writer.writeEndDocument();
        writer.flush();
        if (line.length() < start + WRAPPER_START.length() + 1
                || !line.substring(start, start + WRAPPER_START.length()).equals(WRAPPER_START)
                || line.charAt(line.length() - 1) != '}') {
            throw ExecutorError.internal("unexpected JSON writer output: " + line.substring(start));
        }
        line.delete(start, start + WRAPPER_START.length());
        line.setLength(line.length() - 1);
        return line;
    }

    /** A Writer onto a StringBuilder: no lock per character (a StringWriter's StringBuffer takes one). */
    private static final class Appender extends Writer {
        private final StringBuilder out;

        Appender(StringBuilder out) {
            this.out = out;
        }

        @Override
        public void write(int c) {
            out.append((char) c);
        }

        @Override
        public void write(char[] chars, int offset, int length) {
            out.append(chars, offset, length);
        }

        @Override
        public void write(String text, int offset, int length) {
            out.append(text, offset, offset + length);
        }

        @Override
        public Writer append(CharSequence text) {
            out.append(text);
            return this;
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }
}
