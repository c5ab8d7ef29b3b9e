package csharness.executor;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCluster;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * One operation being run: its scope, its target entity and its arguments. The accessors for the target
 * apply the arguments every client, database and collection operation may take (readConcern,
 * writeConcern, readPreference, timeoutMS) through the driver's own with* methods, and resolve the
 * session argument to the driver's session.
 */
final class Call {
    final Scope scope;
    final String name;
    final String object;
    final Object target;
    final Arguments args;
    /** The run request's params, for budgetMS; null for a nested operation of withTransaction. */
    private final Params request;

    Call(Scope scope, String name, String object, Object target, Arguments args, Params request) {
        this.scope = scope;
        this.name = name;
        this.object = object;
        this.target = target;
        this.args = args;
        this.request = request;
    }

    /**
     * The budget of iterateUntilDocumentOrError on a change stream: the request's budgetMS when it has one (section
     * 6.4.2: a slice, for that request alone), else the scope's iterationTimeoutMS. Only that operation asks, so
     * everywhere else budgetMS stays an unknown field, ignored (section 3).
     */
    long iterationBudgetMS() {
        Long budgetMS = request == null ? null : request.optionalInteger("budgetMS");
        if (budgetMS == null) {
            return scope.iterationTimeoutMS;
        }
        if (budgetMS <= 0) {
            throw ExecutorError.invalidRequest("run: params.budgetMS must be a positive integer, got " + budgetMS);
        }
        return budgetMS;
    }

    /** The session argument as the driver's session, or null. */
    ClientSession session() {
        String id = args.optionalString("session");
        return id == null ? null : scope.entity(id, Scope.SessionEntity.class, "session").session();
    }

    boolean targets(Class<?> type) {
        return type.isInstance(target);
    }

    @SuppressWarnings("unchecked")
    MongoCollection<BsonDocument> collection() {
        MongoCollection<BsonDocument> collection = (MongoCollection<BsonDocument>) expect(MongoCollection.class, "collection");
        BsonValue readConcern = args.unread("readConcern");
        if (readConcern != null) {
            collection = collection.withReadConcern(Options.readConcern(readConcern.asDocument()));
        }
        BsonValue writeConcern = args.unread("writeConcern");
        if (writeConcern != null) {
            collection = collection.withWriteConcern(Options.writeConcern(writeConcern.asDocument()));
        }
        BsonValue readPreference = args.unread("readPreference");
        if (readPreference != null) {
            collection = collection.withReadPreference(Options.readPreference(readPreference.asDocument()));
        }
        Long timeoutMS = timeoutMS();
        return timeoutMS == null ? collection : collection.withTimeout(timeoutMS, TimeUnit.MILLISECONDS);
    }

    MongoDatabase database() {
        MongoDatabase database = expect(MongoDatabase.class, "database");
        BsonValue readConcern = args.unread("readConcern");
        if (readConcern != null) {
            database = database.withReadConcern(Options.readConcern(readConcern.asDocument()));
        }
        BsonValue writeConcern = args.unread("writeConcern");
        if (writeConcern != null) {
            database = database.withWriteConcern(Options.writeConcern(writeConcern.asDocument()));
        }
        BsonValue readPreference = args.unread("readPreference");
        if (readPreference != null) {
            database = database.withReadPreference(Options.readPreference(readPreference.asDocument()));
        }
        Long timeoutMS = timeoutMS();
        return timeoutMS == null ? database : database.withTimeout(timeoutMS, TimeUnit.MILLISECONDS);
    }

    MongoCluster cluster() {
        MongoCluster cluster = expect(ClientEntity.class, "client").client;
        BsonValue readConcern = args.unread("readConcern");
        if (readConcern != null) {
            cluster = cluster.withReadConcern(Options.readConcern(readConcern.asDocument()));
        }
        BsonValue writeConcern = args.unread("writeConcern");
        if (writeConcern != null) {
            cluster = cluster.withWriteConcern(Options.writeConcern(writeConcern.asDocument()));
        }
        BsonValue readPreference = args.unread("readPreference");
        if (readPreference != null) {
            cluster = cluster.withReadPreference(Options.readPreference(readPreference.asDocument()));
        }
        Long timeoutMS = timeoutMS();
        return timeoutMS == null ? cluster : cluster.withTimeout(timeoutMS, TimeUnit.MILLISECONDS);
    }

    private Long timeoutMS() {
        BsonValue timeoutMS = args.unread("timeoutMS");
        return timeoutMS == null ? null : Values.optionNumber(name + ": timeoutMS", timeoutMS);
    }

    <T> T expect(Class<T> type, String what) {
        if (!type.isInstance(target)) {
            throw ExecutorError.invalidRequest(
                    "operation '" + name + "' needs a " + what + ", but '" + object + "' is a " + describe(target));
        }
        return type.cast(target);
    }

    private static String describe(Object entity) {
        if (entity instanceof ClientEntity) {
            return "client";
        }
        if (entity instanceof MongoDatabase) {
            return "database";
        }
        if (entity instanceof MongoCollection) {
            return "collection";
        }
        if (entity instanceof Scope.SessionEntity) {
            return "session";
        }
        return entity.getClass().getSimpleName();
    }
}
