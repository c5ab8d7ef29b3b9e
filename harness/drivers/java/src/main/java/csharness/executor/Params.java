package csharness.executor;

import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A request's params, read with the checks section 6 asks for: a missing or mistyped parameter is the
 * harness's (or a hand-written request's) mistake, answered invalidRequest. Numbers are accepted plain or
 * canonical (section 2: readers are lenient).
 */
final class Params {
    private final String method;
    private final BsonDocument params;

    Params(String method, BsonDocument params) {
        this.method = method;
        this.params = params;
    }

    String string(String name) {
        BsonValue value = params.get(name);
        if (value == null || !value.isString()) {
            throw ExecutorError.invalidRequest(method + ": params." + name + " must be a string");
        }
        return value.asString().getValue();
    }

    /** A string parameter that may be missing or null. */
    String optionalString(String name) {
        BsonValue value = params.get(name);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isString()) {
            throw ExecutorError.invalidRequest(method + ": params." + name + " must be a string or null");
        }
        return value.asString().getValue();
    }

    BsonDocument document(String name) {
        BsonValue value = params.get(name);
        if (value == null || !value.isDocument()) {
            throw ExecutorError.invalidRequest(method + ": params." + name + " must be an object");
        }
        return value.asDocument();
    }

    BsonValue value(String name) {
        BsonValue value = params.get(name);
        if (value == null) {
            throw ExecutorError.invalidRequest(method + ": params." + name + " is missing");
        }
        return value;
    }

    long integer(String name) {
        Long value = optionalInteger(name);
        if (value == null) {
            throw ExecutorError.invalidRequest(method + ": params." + name + " must be an integer");
        }
        return value;
    }

    /** An integer parameter that may be missing or null. */
    Long optionalInteger(String name) {
        BsonValue value = params.get(name);
        if (value == null || value.isNull()) {
            return null;
        }
        if (value.isInt32() || value.isInt64()) {
            return value.asNumber().longValue();
        }
        if (value.isDouble() && value.asDouble().getValue() == Math.rint(value.asDouble().getValue())) {
            return (long) value.asDouble().getValue();
        }
        throw ExecutorError.invalidRequest(method + ": params." + name + " must be an integer or null");
    }
}
