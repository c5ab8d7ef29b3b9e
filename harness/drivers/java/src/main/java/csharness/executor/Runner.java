package csharness.executor;

import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Runs one operation document of a scope (section 6.2/6.3): finds its code by name and target, runs it,
 * and keeps what saveResultAsEntity names; a driver object is kept in any case, under the test's name or
 * one of the executor's ("$result" and a counter, which no test id starts with). The driver's exceptions
 * pass through unchanged, so withTransaction's loop sees them.
 */
final class Runner {
    /** A nested operation of withTransaction: no request of its own, so no budgetMS. */
    Reply run(Scope scope, BsonDocument operation) {
        return run(scope, operation, null);
    }

    /**
     * The operation's reply; throws the driver's exception, or an ExecutorError. {@code request} is the run
     * request's params (null for a nested operation), read only by the operations that take more from it.
     */
    Reply run(Scope scope, BsonDocument operation, Params request) {
        String name = text(operation, "name");
        String object = text(operation, "object");
        BsonValue arguments = operation.get("arguments");
        if (arguments != null && !arguments.isDocument()) {
            throw ExecutorError.invalidRequest("operation '" + name + "': arguments must be a document");
        }
        Object target = scope.entity(object);
        Operation code = Operations.find(name, target, object);
        Arguments args = new Arguments(name, arguments == null ? new BsonDocument() : arguments.asDocument());
        Outcome outcome = code.run(new Call(scope, name, object, target, args, request));
        String saveAs = operation.isString("saveResultAsEntity")
                ? operation.getString("saveResultAsEntity").getValue()
                : null;
        if (outcome.driverObject() != null) {
            String id = saveAs != null ? saveAs : scope.resultName();
            scope.save(id, outcome.driverObject());
            return Reply.entity(id);
        }
        if (saveAs != null) {
            scope.save(saveAs, outcome.value());
        }
        Reply reply = "documents".equals(outcome.kind())
                ? Reply.documents(outcome.value().asArray())
                : Reply.value(outcome.value());
        return outcome.nested() == null ? reply : reply.withNested(outcome.nested());
    }

    private static String text(BsonDocument operation, String key) {
        if (!operation.isString(key)) {
            throw ExecutorError.invalidRequest("an operation needs a string '" + key + "'");
        }
        return operation.getString(key).getValue();
    }
}
