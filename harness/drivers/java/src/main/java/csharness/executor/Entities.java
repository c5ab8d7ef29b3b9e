package csharness.executor;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * createEntity (section 6.1): one entry of the unified format's createEntities, in declaration order.
 * Databases and collections read and write BsonDocument, so data keeps its BSON types and key order both
 * ways; a session's lsid is kept from its creation.
 */
final class Entities {
    private Entities() {}

    static void create(Scope scope, BsonDocument entity) {
        if (entity.size() != 1) {
            throw ExecutorError.invalidRequest("an entity is one {type: {...}} entry, got " + entity.keySet());
        }
        String type = entity.getFirstKey();
        BsonValue value = entity.get(type);
        if (!value.isDocument() || !value.asDocument().isString("id")) {
            throw ExecutorError.invalidRequest("entity '" + type + "' needs a document with a string id");
        }
        BsonDocument spec = value.asDocument();
        String id = spec.getString("id").getValue();
        if (scope.has(id)) {
            throw ExecutorError.invalidRequest("scope '" + scope.id + "' already has an entity '" + id + "'");
        }
        Object created = switch (type) {
            case "client" -> Clients.create(scope, spec);
            case "database" -> database(scope, spec);
            case "collection" -> collection(scope, spec);
            case "session" -> session(scope, spec);
            default -> throw ExecutorError.notImplemented("entity type '" + type + "' is not implemented by the Java executor");
        };
        scope.put(id, created);
    }

    private static MongoDatabase database(Scope scope, BsonDocument spec) {
        only(spec, "database", Set.of("id", "client", "databaseName", "databaseOptions"));
        ClientEntity client = scope.entity(spec.getString("client").getValue(), ClientEntity.class, "client");
        MongoDatabase database = client.client.getDatabase(spec.getString("databaseName").getValue());
        if (spec.containsKey("databaseOptions")) {
            BsonDocument options = spec.getDocument("databaseOptions");
            for (String key : options.keySet()) {
                BsonValue option = options.get(key);
                database = switch (key) {
                    case "readConcern" -> database.withReadConcern(Options.readConcern(option.asDocument()));
                    case "writeConcern" -> database.withWriteConcern(Options.writeConcern(option.asDocument()));
                    case "readPreference" -> database.withReadPreference(Options.readPreference(option.asDocument()));
                    case "timeoutMS" -> database.withTimeout(Values.optionNumber(key, option), TimeUnit.MILLISECONDS);
                    default -> throw ExecutorError.notImplemented("databaseOptions '" + key + "' is not implemented");
                };
            }
        }
        return database;
    }

    private static MongoCollection<BsonDocument> collection(Scope scope, BsonDocument spec) {
        only(spec, "collection", Set.of("id", "database", "collectionName", "collectionOptions"));
        MongoDatabase database = scope.entity(spec.getString("database").getValue(), MongoDatabase.class, "database");
        MongoCollection<BsonDocument> collection =
                database.getCollection(spec.getString("collectionName").getValue(), BsonDocument.class);
        if (spec.containsKey("collectionOptions")) {
            BsonDocument options = spec.getDocument("collectionOptions");
            for (String key : options.keySet()) {
                BsonValue option = options.get(key);
                collection = switch (key) {
                    case "readConcern" -> collection.withReadConcern(Options.readConcern(option.asDocument()));
                    case "writeConcern" -> collection.withWriteConcern(Options.writeConcern(option.asDocument()));
                    case "readPreference" -> collection.withReadPreference(Options.readPreference(option.asDocument()));
                    case "timeoutMS" -> collection.withTimeout(Values.optionNumber(key, option), TimeUnit.MILLISECONDS);
                    default -> throw ExecutorError.notImplemented("collectionOptions '" + key + "' is not implemented");
                };
            }
        }
        return collection;
    }

    private static Scope.SessionEntity session(Scope scope, BsonDocument spec) {
        only(spec, "session", Set.of("id", "client", "sessionOptions"));
        ClientEntity client = scope.entity(spec.getString("client").getValue(), ClientEntity.class, "client");
        ClientSession session = spec.containsKey("sessionOptions")
                ? client.client.startSession(Options.sessionOptions(spec.getDocument("sessionOptions")))
                : client.client.startSession();
        BsonDocument lsid = Values.copy(session.getServerSession().getIdentifier());
        return new Scope.SessionEntity(session, client, lsid);
    }

    private static void only(BsonDocument spec, String type, Set<String> keys) {
        for (String key : spec.keySet()) {
            if (!keys.contains(key)) {
                throw ExecutorError.notImplemented(type + " option '" + key + "' is not implemented by the Java executor");
            }
        }
    }
}
