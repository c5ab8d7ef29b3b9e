package csharness.executor;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoServerException;
import com.mongodb.connection.ConnectionDescription;
import com.mongodb.event.CommandEvent;
import com.mongodb.event.CommandFailedEvent;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;

/**
 * The client's command monitoring (section 6.1 and 6.6): the driver's CommandListener, turned into event
 * documents. A started event is left out for the client's ignored commands; its succeeded or failed event is
 * left out with it, by request id. Sensitive and internal commands are recorded as the driver published them:
 * the harness leaves them out or blanks them (section 7.1).
 *
 * <p>Every event, left out or not, also goes to the scope's command log (section 6.4.2) as the same document plus
 * the client's id.
 */
final class CommandEvents implements CommandListener {
    private final EventLog log;
    private final CommandLog scopeLog;
    private final String clientId;
    private final Set<String> ignored;
    private final Set<Integer> leftOut = ConcurrentHashMap.newKeySet();

    CommandEvents(EventLog log, CommandLog scopeLog, String clientId, Set<String> ignored) {
        this.log = log;
        this.scopeLog = scopeLog;
        this.clientId = clientId;
        this.ignored = ignored;
    }

    @Override
    public void commandStarted(CommandStartedEvent event) {
        BsonDocument document = common("commandStartedEvent", event);
        document.put("command", Values.copy(event.getCommand()));
        logInScope(document);
        if (ignored.contains(event.getCommandName())) {
            leftOut.add(event.getRequestId());
            return;
        }
        log.add(document);
    }

    @Override
    public void commandSucceeded(CommandSucceededEvent event) {
        BsonDocument document = common("commandSucceededEvent", event);
        document.put("reply", Values.copy(event.getResponse()));
        document.put("durationMS", new BsonDouble(event.getElapsedTime(TimeUnit.NANOSECONDS) / 1e6));
        logInScope(document);
        if (!leftOut.remove(event.getRequestId())) {
            log.add(document);
        }
    }

    @Override
    public void commandFailed(CommandFailedEvent event) {
        BsonDocument document = common("commandFailedEvent", event);
        document.put("failure", failure(event.getThrowable()));
        document.put("durationMS", new BsonDouble(event.getElapsedTime(TimeUnit.NANOSECONDS) / 1e6));
        logInScope(document);
        if (!leftOut.remove(event.getRequestId())) {
            log.add(document);
        }
    }

    /** The scope's log entry: the client's own event document (shared, never changed after) with the client's id. */
    private void logInScope(BsonDocument document) {
        BsonDocument entry = new BsonDocument();
        entry.putAll(document);
        entry.put("client", new BsonString(clientId));
        scopeLog.add(entry);
    }

    private static BsonDocument common(String kind, CommandEvent event) {
        BsonDocument document = new BsonDocument("kind", new BsonString(kind));
        document.put("commandName", new BsonString(event.getCommandName()));
        document.put("databaseName", new BsonString(event.getDatabaseName()));
        document.put("requestId", new BsonInt32(event.getRequestId()));
        document.put("operationId", new BsonInt64(event.getOperationId()));
        ConnectionDescription connection = event.getConnectionDescription();
        if (connection != null) {
            Long serverConnectionId = connection.getConnectionId().getServerValue();
            if (serverConnectionId != null) {
                document.put("serverConnectionId", new BsonInt64(serverConnectionId));
            }
            if (connection.getServiceId() != null) {
                document.put("serviceId", new BsonObjectId(connection.getServiceId()));
            }
        }
        return document;
    }

    /**
     * The server's reply for a server error (rebuilt from the error's code and message when the driver does not
     * keep the reply); else the error's message and class, as section 6.6 asks.
     */
    static BsonDocument failure(Throwable error) {
        if (error instanceof MongoCommandException command && command.getResponse() != null) {
            return Values.copy(command.getResponse());
        }
        if (DriverErrors.fromServer(error)) {
            MongoException server = (MongoException) error;
            BsonDocument reply = new BsonDocument("ok", new BsonInt32(0));
            reply.put("errmsg", new BsonString(String.valueOf(server.getMessage())));
            reply.put("code", new BsonInt32(server.getCode()));
            if (server instanceof MongoServerException named && named.getErrorCodeName() != null) {
                reply.put("codeName", new BsonString(named.getErrorCodeName()));
            }
            return reply;
        }
        BsonDocument failure = new BsonDocument("errmsg", new BsonString(String.valueOf(error.getMessage())));
        failure.put("errtype", new BsonString(error.getClass().getSimpleName()));
        return failure;
    }
}
