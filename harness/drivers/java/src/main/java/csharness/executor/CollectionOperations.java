package csharness.executor;

import com.mongodb.MongoNamespace;
import com.mongodb.client.ClientSession;
import com.mongodb.client.DistinctIterable;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.CountOptions;
import com.mongodb.client.model.DeleteOptions;
import com.mongodb.client.model.EstimatedDocumentCountOptions;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.InsertManyOptions;
import com.mongodb.client.model.InsertOneOptions;
import com.mongodb.client.model.RenameCollectionOptions;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOptions;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/** The CRUD and index operations on a collection entity (CRUD and index management specs). */
final class CollectionOperations {
    private CollectionOperations() {}

    static void register() {
        Operations.add("insertOne", MongoCollection.class, CollectionOperations::insertOne);
        Operations.add("insertMany", MongoCollection.class, CollectionOperations::insertMany);
        Operations.add("updateOne", MongoCollection.class, call -> update(call, true));
        Operations.add("updateMany", MongoCollection.class, call -> update(call, false));
        Operations.add("replaceOne", MongoCollection.class, CollectionOperations::replaceOne);
        Operations.add("deleteOne", MongoCollection.class, call -> delete(call, true));
        Operations.add("deleteMany", MongoCollection.class, call -> delete(call, false));
        Operations.add("find", MongoCollection.class, call -> Results.documents(find(call)));
        Operations.add("createFindCursor", MongoCollection.class, call -> Outcome.entity(find(call).cursor()));
        Operations.add("countDocuments", MongoCollection.class, CollectionOperations::countDocuments);
        Operations.add("estimatedDocumentCount", MongoCollection.class, CollectionOperations::estimatedDocumentCount);
        Operations.add("distinct", MongoCollection.class, CollectionOperations::distinct);
        Operations.add("aggregate", MongoCollection.class, Aggregation::onCollection);
        Operations.add("bulkWrite", MongoCollection.class, BulkWrites::run);
        Operations.add("findOneAndDelete", MongoCollection.class, FindAndModify::delete);
        Operations.add("findOneAndReplace", MongoCollection.class, FindAndModify::replace);
        Operations.add("findOneAndUpdate", MongoCollection.class, FindAndModify::update);
        Operations.add("createIndex", MongoCollection.class, CollectionOperations::createIndex);
        Operations.add("dropIndex", MongoCollection.class, CollectionOperations::dropIndex);
        Operations.add("listIndexes", MongoCollection.class, CollectionOperations::listIndexes);
        Operations.add("rename", MongoCollection.class, CollectionOperations::rename);
        Operations.add("drop", MongoCollection.class, CollectionOperations::drop);
    }

    private static Outcome insertOne(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument document = call.args.document("document");
        InsertOneOptions options = new InsertOneOptions();
        CommonOptions.bool(call.args, "bypassDocumentValidation", options::bypassDocumentValidation);
        CommonOptions.comment(call.args, options::comment);
        call.args.done();
        return Outcome.value(Results.insertOne(session == null
                ? collection.insertOne(document, options)
                : collection.insertOne(session, document, options)));
    }

    private static Outcome insertMany(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        var documents = call.args.documents("documents");
        InsertManyOptions options = new InsertManyOptions();
        CommonOptions.bool(call.args, "ordered", options::ordered);
        CommonOptions.bool(call.args, "bypassDocumentValidation", options::bypassDocumentValidation);
        CommonOptions.comment(call.args, options::comment);
        call.args.done();
        return Outcome.value(Results.insertMany(session == null
                ? collection.insertMany(documents, options)
                : collection.insertMany(session, documents, options)));
    }

    /** updateOne and updateMany: an update document or an aggregation pipeline. */
    private static Outcome update(Call call, boolean one) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        BsonValue update = call.args.requiredValue("update");
        UpdateOptions options = updateOptions(call.args);
        if (one) {
            CommonOptions.document(call.args, "sort", options::sort);
        }
        call.args.done();
        if (update.isArray()) {
            var pipeline = call.args.documents("update");
            if (one) {
                return Outcome.value(Results.update(session == null
                        ? collection.updateOne(filter, pipeline, options)
                        : collection.updateOne(session, filter, pipeline, options)));
            }
            return Outcome.value(Results.update(session == null
                    ? collection.updateMany(filter, pipeline, options)
                    : collection.updateMany(session, filter, pipeline, options)));
        }
        BsonDocument document = call.args.document("update");
        if (one) {
            return Outcome.value(Results.update(session == null
                    ? collection.updateOne(filter, document, options)
                    : collection.updateOne(session, filter, document, options)));
        }
        return Outcome.value(Results.update(session == null
                ? collection.updateMany(filter, document, options)
                : collection.updateMany(session, filter, document, options)));
    }

    static UpdateOptions updateOptions(Arguments args) {
        UpdateOptions options = new UpdateOptions();
        CommonOptions.bool(args, "upsert", options::upsert);
        CommonOptions.documents(args, "arrayFilters", options::arrayFilters);
        CommonOptions.bool(args, "bypassDocumentValidation", options::bypassDocumentValidation);
        CommonOptions.hint(args, options::hint, options::hintString);
        CommonOptions.collation(args, options::collation);
        CommonOptions.document(args, "let", options::let);
        CommonOptions.comment(args, options::comment);
        return options;
    }

    private static Outcome replaceOne(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        BsonDocument replacement = call.args.document("replacement");
        ReplaceOptions options = replaceOptions(call.args);
        CommonOptions.document(call.args, "sort", options::sort);
        call.args.done();
        return Outcome.value(Results.update(session == null
                ? collection.replaceOne(filter, replacement, options)
                : collection.replaceOne(session, filter, replacement, options)));
    }

    static ReplaceOptions replaceOptions(Arguments args) {
        ReplaceOptions options = new ReplaceOptions();
        CommonOptions.bool(args, "upsert", options::upsert);
        CommonOptions.bool(args, "bypassDocumentValidation", options::bypassDocumentValidation);
        CommonOptions.hint(args, options::hint, options::hintString);
        CommonOptions.collation(args, options::collation);
        CommonOptions.document(args, "let", options::let);
        CommonOptions.comment(args, options::comment);
        return options;
    }

    private static Outcome delete(Call call, boolean one) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        DeleteOptions options = deleteOptions(call.args);
        call.args.done();
        if (one) {
            return Outcome.value(Results.delete(session == null
                    ? collection.deleteOne(filter, options)
                    : collection.deleteOne(session, filter, options)));
        }
        return Outcome.value(Results.delete(session == null
                ? collection.deleteMany(filter, options)
                : collection.deleteMany(session, filter, options)));
    }

    static DeleteOptions deleteOptions(Arguments args) {
        DeleteOptions options = new DeleteOptions();
        CommonOptions.hint(args, options::hint, options::hintString);
        CommonOptions.collation(args, options::collation);
        CommonOptions.document(args, "let", options::let);
        CommonOptions.comment(args, options::comment);
        return options;
    }

    private static FindIterable<BsonDocument> find(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.has("filter") ? call.args.document("filter") : new BsonDocument();
        FindIterable<BsonDocument> find = session == null ? collection.find(filter) : collection.find(session, filter);
        CommonOptions.document(call.args, "sort", find::sort);
        CommonOptions.document(call.args, "projection", find::projection);
        CommonOptions.integer(call.args, "skip", find::skip);
        CommonOptions.integer(call.args, "limit", find::limit);
        CommonOptions.integer(call.args, "batchSize", find::batchSize);
        CommonOptions.hint(call.args, find::hint, find::hintString);
        CommonOptions.collation(call.args, find::collation);
        CommonOptions.comment(call.args, find::comment);
        CommonOptions.document(call.args, "let", find::let);
        CommonOptions.document(call.args, "min", find::min);
        CommonOptions.document(call.args, "max", find::max);
        CommonOptions.bool(call.args, "returnKey", find::returnKey);
        CommonOptions.bool(call.args, "showRecordId", find::showRecordId);
        CommonOptions.bool(call.args, "allowDiskUse", find::allowDiskUse);
        CommonOptions.bool(call.args, "noCursorTimeout", find::noCursorTimeout);
        CommonOptions.bool(call.args, "allowPartialResults", find::partial);
        CommonOptions.millis(call.args, "maxTimeMS", find::maxTime);
        CommonOptions.millis(call.args, "maxAwaitTimeMS", find::maxAwaitTime);
        call.args.done();
        return find;
    }

    private static Outcome countDocuments(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument filter = call.args.document("filter");
        CountOptions options = new CountOptions();
        CommonOptions.integer(call.args, "skip", options::skip);
        CommonOptions.integer(call.args, "limit", options::limit);
        CommonOptions.hint(call.args, options::hint, options::hintString);
        CommonOptions.collation(call.args, options::collation);
        CommonOptions.comment(call.args, options::comment);
        CommonOptions.millis(call.args, "maxTimeMS", options::maxTime);
        call.args.done();
        return Outcome.value(Values.count(session == null
                ? collection.countDocuments(filter, options)
                : collection.countDocuments(session, filter, options)));
    }

    private static Outcome estimatedDocumentCount(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        EstimatedDocumentCountOptions options = new EstimatedDocumentCountOptions();
        CommonOptions.comment(call.args, options::comment);
        CommonOptions.millis(call.args, "maxTimeMS", options::maxTime);
        call.args.done();
        return Outcome.value(Values.count(collection.estimatedDocumentCount(options)));
    }

    private static Outcome distinct(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        String field = call.args.string("fieldName");
        BsonDocument filter = call.args.has("filter") ? call.args.document("filter") : new BsonDocument();
        DistinctIterable<BsonValue> distinct = session == null
                ? collection.distinct(field, filter, BsonValue.class)
                : collection.distinct(session, field, filter, BsonValue.class);
        CommonOptions.collation(call.args, distinct::collation);
        CommonOptions.comment(call.args, distinct::comment);
        CommonOptions.millis(call.args, "maxTimeMS", distinct::maxTime);
        call.args.done();
        return Outcome.value(new org.bson.BsonArray(distinct.into(new java.util.ArrayList<>())));
    }

    private static Outcome createIndex(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        BsonDocument keys = call.args.document("keys");
        IndexOptions options = new IndexOptions();
        String name = call.args.optionalString("name");
        if (name != null) {
            options.name(name);
        }
        CommonOptions.bool(call.args, "unique", options::unique);
        CommonOptions.bool(call.args, "sparse", options::sparse);
        CommonOptions.bool(call.args, "hidden", options::hidden);
        CommonOptions.document(call.args, "partialFilterExpression", options::partialFilterExpression);
        CommonOptions.collation(call.args, options::collation);
        Long expireAfter = call.args.optionalLong("expireAfterSeconds");
        if (expireAfter != null) {
            options.expireAfter(expireAfter, TimeUnit.SECONDS);
        }
        call.args.done();
        return Outcome.value(new BsonString(session == null
                ? collection.createIndex(keys, options)
                : collection.createIndex(session, keys, options)));
    }

    private static Outcome dropIndex(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        String name = call.args.string("name");
        call.args.done();
        if (session == null) {
            collection.dropIndex(name);
        } else {
            collection.dropIndex(session, name);
        }
        return Outcome.NONE;
    }

    private static Outcome listIndexes(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        var indexes = session == null
                ? collection.listIndexes(BsonDocument.class)
                : collection.listIndexes(session, BsonDocument.class);
        CommonOptions.integer(call.args, "batchSize", indexes::batchSize);
        call.args.done();
        return Results.documents(indexes);
    }

    private static Outcome rename(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        MongoNamespace to = new MongoNamespace(collection.getNamespace().getDatabaseName(), call.args.string("to"));
        RenameCollectionOptions options = new RenameCollectionOptions();
        CommonOptions.bool(call.args, "dropTarget", options::dropTarget);
        call.args.done();
        if (session == null) {
            collection.renameCollection(to, options);
        } else {
            collection.renameCollection(session, to, options);
        }
        return Outcome.NONE;
    }

    private static Outcome drop(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        call.args.done();
        if (session == null) {
            collection.drop();
        } else {
            collection.drop(session);
        }
        return Outcome.NONE;
    }
}
