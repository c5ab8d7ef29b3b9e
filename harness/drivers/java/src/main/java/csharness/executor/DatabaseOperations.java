package csharness.executor;

import com.mongodb.ReadPreference;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.ChangeStreamPreAndPostImagesOptions;
import com.mongodb.client.model.CreateCollectionOptions;
import com.mongodb.client.model.CreateViewOptions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** The operations on a database entity: runCommand, collections, aggregate. */
final class DatabaseOperations {
    private DatabaseOperations() {}

    static void register() {
        Operations.add("runCommand", MongoDatabase.class, DatabaseOperations::runCommand);
        Operations.add("createCollection", MongoDatabase.class, DatabaseOperations::createCollection);
        Operations.add("dropCollection", MongoDatabase.class, DatabaseOperations::dropCollection);
        Operations.add("listCollections", MongoDatabase.class, DatabaseOperations::listCollections);
        Operations.add("listCollectionNames", MongoDatabase.class, DatabaseOperations::listCollectionNames);
        Operations.add("aggregate", MongoDatabase.class, Aggregation::onDatabase);
        Operations.add("dropDatabase", MongoDatabase.class, DatabaseOperations::dropDatabase);
    }

    /** The command as given (its first key names it; commandName is informational), with its read preference. */
    private static Outcome runCommand(Call call) {
        BsonValue readPreferenceSpec = call.args.value("readPreference");
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        BsonDocument command = call.args.document("command");
        call.args.optionalString("commandName");
        call.args.done();
        ReadPreference readPreference = readPreferenceSpec == null
                ? ReadPreference.primary()
                : Options.readPreference(readPreferenceSpec.asDocument());
        return Outcome.value(session == null
                ? database.runCommand(command, readPreference, BsonDocument.class)
                : database.runCommand(session, command, readPreference, BsonDocument.class));
    }

    private static Outcome createCollection(Call call) {
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        String name = call.args.string("collection");
        String viewOn = call.args.optionalString("viewOn");
        if (viewOn != null) {
            List<BsonDocument> pipeline = call.args.has("pipeline") ? call.args.documents("pipeline") : List.of();
            call.args.done();
            if (session == null) {
                database.createView(name, viewOn, pipeline, new CreateViewOptions());
            } else {
                database.createView(session, name, viewOn, pipeline, new CreateViewOptions());
            }
            return Outcome.NONE;
        }
        CreateCollectionOptions options = new CreateCollectionOptions();
        CommonOptions.bool(call.args, "capped", options::capped);
        Long size = call.args.optionalLong("size");
        if (size != null) {
            options.sizeInBytes(size);
        }
        Long max = call.args.optionalLong("max");
        if (max != null) {
            options.maxDocuments(max);
        }
        Long expireAfter = call.args.optionalLong("expireAfterSeconds");
        if (expireAfter != null) {
            options.expireAfter(expireAfter, TimeUnit.SECONDS);
        }
        BsonDocument images = call.args.optionalDocument("changeStreamPreAndPostImages");
        if (images != null) {
            options.changeStreamPreAndPostImagesOptions(
                    new ChangeStreamPreAndPostImagesOptions(images.getBoolean("enabled").getValue()));
        }
        call.args.done();
        if (session == null) {
            database.createCollection(name, options);
        } else {
            database.createCollection(session, name, options);
        }
        return Outcome.NONE;
    }

    private static Outcome dropCollection(Call call) {
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        String name = call.args.string("collection");
        call.args.done();
        if (session == null) {
            database.getCollection(name).drop();
        } else {
            database.getCollection(name).drop(session);
        }
        return Outcome.NONE;
    }

    private static Outcome listCollections(Call call) {
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        var collections = session == null
                ? database.listCollections(BsonDocument.class)
                : database.listCollections(session, BsonDocument.class);
        CommonOptions.document(call.args, "filter", collections::filter);
        CommonOptions.integer(call.args, "batchSize", collections::batchSize);
        CommonOptions.comment(call.args, collections::comment);
        call.args.done();
        return Results.documents(collections);
    }

    private static Outcome listCollectionNames(Call call) {
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        var names = session == null ? database.listCollectionNames() : database.listCollectionNames(session);
        CommonOptions.document(call.args, "filter", names::filter);
        CommonOptions.integer(call.args, "batchSize", names::batchSize);
        CommonOptions.comment(call.args, names::comment);
        call.args.done();
        return Outcome.value(Results.strings(names));
    }

    private static Outcome dropDatabase(Call call) {
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        call.args.done();
        if (session == null) {
            database.drop();
        } else {
            database.drop(session);
        }
        return Outcome.NONE;
    }
}
