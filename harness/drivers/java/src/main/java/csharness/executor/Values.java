package csharness.executor;

import org.bson.BsonDocument;
import org.bson.BsonDocumentReader;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.DecoderContext;

/** Small conversions between the protocol's BSON values and what the driver's API takes or gives. */
final class Values {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private Values() {}

    /** An option's number as a long: Int32, Int64 or an integral Double (options compare by value, 2.1). */
    static long optionNumber(String what, BsonValue value) {
        if (value.isInt32() || value.isInt64()) {
            return value.asNumber().longValue();
        }
        if (value.isDouble()) {
            double number = value.asDouble().getValue();
            if (number == Math.rint(number) && !Double.isInfinite(number)) {
                return (long) number;
            }
        }
        throw ExecutorError.invalidRequest(what + " must be an integer, got " + value);
    }

    /** A count the driver gives as a long, as the smallest BSON integer that holds it. */
    static BsonValue count(long value) {
        return value == (int) value ? new BsonInt32((int) value) : new BsonInt64(value);
    }

    /**
     * A deep copy: the driver's command documents may be views of a network buffer that is released once
     * the listener returns, so an event keeps a copy of its own.
     */
    static BsonDocument copy(BsonDocument document) {
        return CODEC.decode(new BsonDocumentReader(document), DecoderContext.builder().build());
    }
}
