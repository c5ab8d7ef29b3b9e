package csharness.executor;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.FindOneAndDeleteOptions;
import com.mongodb.client.model.FindOneAndReplaceOptions;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.ReturnDocument;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** findOneAndDelete, findOneAndReplace and findOneAndUpdate: the document found, or null. */
final class FindAndModify {
    private FindAndModify() {}

    static Outcome delete(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        FindOneAndDeleteOptions options = new FindOneAndDeleteOptions();
        CommonOptions.document(call.args, "projection", options::projection);
        CommonOptions.document(call.args, "sort", options::sort);
        sharedOptions(call.args, options::hint, options::hintString, options::collation, options::let,
                options::comment, options::maxTime);
        call.args.done();
        return Outcome.value(session == null
                ? collection.findOneAndDelete(filter, options)
                : collection.findOneAndDelete(session, filter, options));
    }

    static Outcome replace(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        BsonDocument replacement = call.args.document("replacement");
        FindOneAndReplaceOptions options = new FindOneAndReplaceOptions();
        CommonOptions.document(call.args, "projection", options::projection);
        CommonOptions.document(call.args, "sort", options::sort);
        CommonOptions.bool(call.args, "upsert", options::upsert);
        CommonOptions.bool(call.args, "bypassDocumentValidation", options::bypassDocumentValidation);
        returnDocument(call.args, options::returnDocument);
        sharedOptions(call.args, options::hint, options::hintString, options::collation, options::let,
                options::comment, options::maxTime);
        call.args.done();
        return Outcome.value(session == null
                ? collection.findOneAndReplace(filter, replacement, options)
                : collection.findOneAndReplace(session, filter, replacement, options));
    }

    static Outcome update(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        BsonValue update = call.args.requiredValue("update");
        FindOneAndUpdateOptions options = new FindOneAndUpdateOptions();
        CommonOptions.document(call.args, "projection", options::projection);
        CommonOptions.document(call.args, "sort", options::sort);
        CommonOptions.bool(call.args, "upsert", options::upsert);
        CommonOptions.bool(call.args, "bypassDocumentValidation", options::bypassDocumentValidation);
        CommonOptions.documents(call.args, "arrayFilters", options::arrayFilters);
        returnDocument(call.args, options::returnDocument);
        sharedOptions(call.args, options::hint, options::hintString, options::collation, options::let,
                options::comment, options::maxTime);
        call.args.done();
        if (update.isArray()) {
            var pipeline = call.args.documents("update");
            return Outcome.value(session == null
                    ? collection.findOneAndUpdate(filter, pipeline, options)
                    : collection.findOneAndUpdate(session, filter, pipeline, options));
        }
        BsonDocument document = call.args.document("update");
        return Outcome.value(session == null
                ? collection.findOneAndUpdate(filter, document, options)
                : collection.findOneAndUpdate(session, filter, document, options));
    }

    /**
     * Reads the options all three operations end with, in this order, so they are listed once; each setter is
     * that operation's own, as the driver's three options classes share no type.
     */
    private static void sharedOptions(Arguments args, Consumer<BsonDocument> hint, Consumer<String> hintName,
            Consumer<Collation> collation, Consumer<BsonDocument> let, Consumer<BsonValue> comment,
            CommonOptions.MillisSetter maxTime) {
        CommonOptions.hint(args, hint, hintName);
        CommonOptions.collation(args, collation);
        CommonOptions.document(args, "let", let);
        CommonOptions.comment(args, comment);
        CommonOptions.millis(args, "maxTimeMS", maxTime);
    }

    private static void returnDocument(Arguments args, Consumer<ReturnDocument> setter) {
        String value = args.optionalString("returnDocument");
        if (value == null) {
            return;
        }
        switch (value) {
            case "Before" -> setter.accept(ReturnDocument.BEFORE);
            case "After" -> setter.accept(ReturnDocument.AFTER);
            default -> throw ExecutorError.invalidRequest("returnDocument must be Before or After, got " + value);
        }
    }
}
