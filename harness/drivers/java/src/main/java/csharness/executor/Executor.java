package csharness.executor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * The protocol's methods (sections 4 to 6): one request in, exactly one reply out. ExecutorErrors become
 * their kind; a driver exception from createEntity or run becomes a driverError; anything else is
 * internal (with its stack trace on stderr).
 */
final class Executor {
    private final Map<String, Scope> scopes = new LinkedHashMap<>();
    private final Runner runner = new Runner();

    Reply handle(Request request) {
        try {
            if (request.method() == null) {
                throw ExecutorError.invalidRequest("the request has no method");
            }
            if (request.params() == null) {
                throw ExecutorError.invalidRequest("params must be an object");
            }
            return dispatch(request.method(), new Params(request.method(), request.params()));
        } catch (ExecutorError refused) {
            return Reply.failure(errorDocument(refused));
        } catch (SessionOperations.WithNested failed) {
            Reply reply = failed.failure instanceof ExecutorError refused
                    ? Reply.failure(errorDocument(refused))
                    : failure(failed.failure);
            return reply.withNested(failed.nested);
        } catch (RuntimeException | LinkageError unexpected) {
            unexpected.printStackTrace();
            return Reply.failure(error("internal", unexpected.toString()));
        }
    }

    private Reply dispatch(String method, Params params) {
        return switch (method) {
            case "hello" -> Reply.value(Hello.result());
            case "openScope" -> openScope(params);
            case "closeScope" -> closeScope(params);
            case "createEntity" -> driverCall(() -> {
                Entities.create(scope(params), params.document("entity"));
                return Reply.value(null);
            });
            case "run" -> driverCall(() -> runner.run(scope(params), params.document("operation"), params));
            case "setEntity" -> setEntity(params);
            case "events" -> Reply.value(client(params).log.events(params.string("eventType")));
            case "sessionLsid" -> Reply.value(session(params).lsid());
            case "sessionState" -> Reply.value(SessionState.of(session(params).session()));
            case "sessionPinnedAddress" -> Reply.value(SessionState.pinnedAddress(session(params).session()));
            case "connectionsCheckedOut" -> Reply.value(new BsonInt32(client(params).pool.checkedOut.get()));
            case "commandLog" -> Reply.value(scope(params).commandLog.from(params.integer("from")));
            case "echo" -> Reply.value(params.value("value"));
            default -> throw ExecutorError.notImplemented("method '" + method + "' is not implemented by the Java executor");
        };
    }

    /** A call into the driver: its exceptions are the driver's errors, reported as driverError. */
    private static Reply driverCall(java.util.function.Supplier<Reply> call) {
        try {
            return call.get();
        } catch (ExecutorError | SessionOperations.WithNested passOn) {
            throw passOn;
        } catch (RuntimeException driverError) {
            return failure(driverError);
        }
    }

    private static Reply failure(RuntimeException driverError) {
        return Reply.failure(DriverErrors.describe(driverError));
    }

    private Reply openScope(Params params) {
        String id = params.string("scope");
        if (scopes.containsKey(id)) {
            throw ExecutorError.invalidRequest("scope '" + id + "' is already open");
        }
        String iterationMode = params.optionalString("iterationMode");
        if (iterationMode == null) {
            iterationMode = Hello.ITERATION_MODES.get(0);
        } else if (!Hello.ITERATION_MODES.contains(iterationMode)) {
            throw ExecutorError.invalidRequest("openScope: iterationMode '" + iterationMode
                    + "' is not one of the Java executor's iteration modes " + Hello.ITERATION_MODES);
        }
        scopes.put(id, new Scope(
                id,
                params.string("uri"),
                params.integer("iterationTimeoutMS"),
                params.optionalInteger("heartbeatFrequencyMS"),
                iterationMode));
        return Reply.value(null);
    }

    private Reply closeScope(Params params) {
        Scope scope = scopes.remove(params.string("scope"));
        if (scope != null) {
            scope.close();
        }
        return Reply.value(null);
    }

    private Reply setEntity(Params params) {
        Scope scope = scope(params);
        String id = params.string("id");
        Object entity = scope.entity(params.string("entity"));
        scope.put(id, entity);
        return Reply.value(null);
    }

    private Scope scope(Params params) {
        String id = params.string("scope");
        Scope scope = scopes.get(id);
        if (scope == null) {
            throw ExecutorError.invalidRequest("no scope '" + id + "' is open");
        }
        return scope;
    }

    private ClientEntity client(Params params) {
        return scope(params).entity(params.string("client"), ClientEntity.class, "client");
    }

    private Scope.SessionEntity session(Params params) {
        return scope(params).entity(params.string("session"), Scope.SessionEntity.class, "session");
    }

    /** EOF on stdin: every scope's streams, cursors, sessions and clients are closed. */
    void closeAll() {
        for (Scope scope : new ArrayList<>(scopes.values())) {
            scope.close();
        }
        scopes.clear();
    }

    static BsonDocument errorDocument(ExecutorError refused) {
        return error(refused.kind, refused.getMessage());
    }

    private static BsonDocument error(String kind, String message) {
        BsonDocument error = new BsonDocument("kind", new BsonString(kind));
        error.put("message", new BsonString(message == null ? kind : message));
        return error;
    }
}
