package csharness.executor;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteManyModel;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateManyModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** bulkWrite on a collection: the unified format's requests as the driver's write models. */
final class BulkWrites {
    private BulkWrites() {}

    static Outcome run(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        List<WriteModel<BsonDocument>> models = new ArrayList<>();
        for (BsonDocument request : call.args.documents("requests")) {
            models.add(model(request));
        }
        BulkWriteOptions options = new BulkWriteOptions();
        CommonOptions.bool(call.args, "ordered", options::ordered);
        CommonOptions.bool(call.args, "bypassDocumentValidation", options::bypassDocumentValidation);
        CommonOptions.document(call.args, "let", options::let);
        CommonOptions.comment(call.args, options::comment);
        call.args.done();
        return Outcome.value(Results.bulkWrite(session == null
                ? collection.bulkWrite(models, options)
                : collection.bulkWrite(session, models, options)));
    }

    private static WriteModel<BsonDocument> model(BsonDocument request) {
        if (request.size() != 1) {
            throw ExecutorError.invalidRequest("a bulkWrite request is one {name: {...}} entry, got " + request.keySet());
        }
        String name = request.getFirstKey();
        Arguments args = new Arguments("bulkWrite " + name, request.getDocument(name));
        WriteModel<BsonDocument> model = switch (name) {
            case "insertOne" -> new InsertOneModel<>(args.document("document"));
            case "updateOne", "updateMany" -> update(name, args);
            case "replaceOne" -> {
                BsonDocument filter = args.document("filter");
                BsonDocument replacement = args.document("replacement");
                var options = CollectionOperations.replaceOptions(args);
                CommonOptions.document(args, "sort", options::sort);
                yield new ReplaceOneModel<>(filter, replacement, options);
            }
            case "deleteOne" -> new DeleteOneModel<>(args.document("filter"), CollectionOperations.deleteOptions(args));
            case "deleteMany" -> new DeleteManyModel<>(args.document("filter"), CollectionOperations.deleteOptions(args));
            default -> throw ExecutorError.notImplemented("bulkWrite request '" + name + "' is not implemented");
        };
        args.done();
        return model;
    }

    private static WriteModel<BsonDocument> update(String name, Arguments args) {
        BsonDocument filter = args.document("filter");
        BsonValue update = args.requiredValue("update");
        var options = CollectionOperations.updateOptions(args);
        boolean one = name.equals("updateOne");
        if (one) {
            CommonOptions.document(args, "sort", options::sort);
        }
        if (update.isArray()) {
            var pipeline = args.documents("update");
            return one ? new UpdateOneModel<>(filter, pipeline, options) : new UpdateManyModel<>(filter, pipeline, options);
        }
        BsonDocument document = args.document("update");
        return one ? new UpdateOneModel<>(filter, document, options) : new UpdateManyModel<>(filter, document, options);
    }
}
