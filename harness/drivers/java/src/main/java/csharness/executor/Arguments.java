package csharness.executor;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * One operation's arguments as the unified format names them. Every argument the operation reads is
 * marked; {@link #done} refuses the rest with notImplemented (section 6.2: an argument the executor
 * cannot pass to its driver is refused, never ignored). Data arguments are handed over as the BSON values
 * they arrived as; options' numbers become Java numbers (section 2.1).
 */
final class Arguments {
    private final String operation;
    private final BsonDocument arguments;
    private final Set<String> used = new LinkedHashSet<>();

    Arguments(String operation, BsonDocument arguments) {
        this.operation = operation;
        this.arguments = arguments;
    }

    String operation() {
        return operation;
    }

    boolean has(String name) {
        return arguments.containsKey(name);
    }

    /** The argument as it came (null when absent), marked as read. */
    BsonValue value(String name) {
        used.add(name);
        return arguments.get(name);
    }

    /** The argument unless an earlier step of the operation already read it (then null). */
    BsonValue unread(String name) {
        return used.contains(name) ? null : value(name);
    }

    BsonValue requiredValue(String name) {
        BsonValue value = value(name);
        if (value == null) {
            throw ExecutorError.invalidRequest(operation + ": argument '" + name + "' is missing");
        }
        return value;
    }

    BsonDocument document(String name) {
        BsonValue value = requiredValue(name);
        if (!value.isDocument()) {
            throw ExecutorError.invalidRequest(operation + ": argument '" + name + "' must be a document");
        }
        return value.asDocument();
    }

    BsonDocument optionalDocument(String name) {
        return has(name) ? document(name) : markAbsent(name);
    }

    private BsonDocument markAbsent(String name) {
        used.add(name);
        return null;
    }

    /** An array of documents (a pipeline, the documents of insertMany). */
    List<BsonDocument> documents(String name) {
        BsonValue value = requiredValue(name);
        if (!value.isArray()) {
            throw ExecutorError.invalidRequest(operation + ": argument '" + name + "' must be an array");
        }
        List<BsonDocument> documents = new ArrayList<>();
        for (BsonValue item : value.asArray()) {
            if (!item.isDocument()) {
                throw ExecutorError.invalidRequest(operation + ": argument '" + name + "' must hold documents");
            }
            documents.add(item.asDocument());
        }
        return documents;
    }

    List<BsonDocument> optionalDocuments(String name) {
        return has(name) ? documents(name) : null;
    }

    String string(String name) {
        BsonValue value = requiredValue(name);
        if (!value.isString()) {
            throw ExecutorError.invalidRequest(operation + ": argument '" + name + "' must be a string");
        }
        return value.asString().getValue();
    }

    String optionalString(String name) {
        return has(name) ? string(name) : null;
    }

    Boolean optionalBoolean(String name) {
        BsonValue value = value(name);
        if (value == null) {
            return null;
        }
        if (!value.isBoolean()) {
            throw ExecutorError.invalidRequest(operation + ": argument '" + name + "' must be a boolean");
        }
        return value.asBoolean().getValue();
    }

    /** An option's number as a Java long (Int32, Int64 or an integral Double: compared by value, 2.1). */
    Long optionalLong(String name) {
        BsonValue value = value(name);
        return value == null ? null : Values.optionNumber(operation + ": argument '" + name + "'", value);
    }

    Integer optionalInt(String name) {
        Long value = optionalLong(name);
        return value == null ? null : Math.toIntExact(value);
    }

    /** Refuses every argument no step of the operation read. */
    void done() {
        List<String> unread = new ArrayList<>();
        for (String name : arguments.keySet()) {
            if (!used.contains(name)) {
                unread.add(name);
            }
        }
        if (!unread.isEmpty()) {
            throw ExecutorError.notImplemented(
                    "operation '" + operation + "': argument(s) " + String.join(", ", quoted(unread))
                            + " not implemented by the Java executor");
        }
    }

    private static List<String> quoted(List<String> names) {
        List<String> quoted = new ArrayList<>();
        for (String name : names) {
            quoted.add("'" + name + "'");
        }
        return quoted;
    }
}
