package csharness.executor;

import com.mongodb.client.model.Collation;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Arguments many operations share, handed to the driver's option setters: each is read (so it is not
 * refused as unknown) and passed on only when the test gives it.
 */
final class CommonOptions {
    private CommonOptions() {}

    static void comment(Arguments args, Consumer<BsonValue> setter) {
        BsonValue comment = args.value("comment");
        if (comment != null) {
            setter.accept(comment);
        }
    }

    /** A hint is an index name (a string) or an index specification (a document). */
    static void hint(Arguments args, Consumer<BsonDocument> byKeys, Consumer<String> byName) {
        BsonValue hint = args.value("hint");
        if (hint == null) {
            return;
        }
        if (hint.isString()) {
            byName.accept(hint.asString().getValue());
        } else if (hint.isDocument()) {
            byKeys.accept(hint.asDocument());
        } else {
            throw ExecutorError.invalidRequest(args.operation() + ": hint must be a string or a document");
        }
    }

    static void collation(Arguments args, Consumer<Collation> setter) {
        BsonDocument collation = args.optionalDocument("collation");
        if (collation != null) {
            setter.accept(Options.collation(collation));
        }
    }

    static void document(Arguments args, String name, Consumer<BsonDocument> setter) {
        BsonDocument value = args.optionalDocument(name);
        if (value != null) {
            setter.accept(value);
        }
    }

    static void documents(Arguments args, String name, Consumer<List<BsonDocument>> setter) {
        List<BsonDocument> value = args.optionalDocuments(name);
        if (value != null) {
            setter.accept(value);
        }
    }

    static void bool(Arguments args, String name, Consumer<Boolean> setter) {
        Boolean value = args.optionalBoolean(name);
        if (value != null) {
            setter.accept(value);
        }
    }

    static void integer(Arguments args, String name, Consumer<Integer> setter) {
        Integer value = args.optionalInt(name);
        if (value != null) {
            setter.accept(value);
        }
    }

    static void millis(Arguments args, String name, MillisSetter setter) {
        Long value = args.optionalLong(name);
        if (value != null) {
            setter.set(value, TimeUnit.MILLISECONDS);
        }
    }

    /** The driver's (long, TimeUnit) setters: maxTime, maxAwaitTime. */
    @FunctionalInterface
    interface MillisSetter {
        void set(long amount, TimeUnit unit);
    }
}
