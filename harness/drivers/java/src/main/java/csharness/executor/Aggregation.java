package csharness.executor;

import com.mongodb.client.AggregateIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import java.util.List;
import org.bson.BsonDocument;

/** aggregate on a collection or a database: its pipeline and options, read to the end. */
final class Aggregation {
    private Aggregation() {}

    static Outcome onCollection(Call call) {
        MongoCollection<BsonDocument> collection = call.collection();
        ClientSession session = call.session();
        List<BsonDocument> pipeline = call.args.documents("pipeline");
        return Results.documents(options(call, session == null
                ? collection.aggregate(pipeline, BsonDocument.class)
                : collection.aggregate(session, pipeline, BsonDocument.class)));
    }

    static Outcome onDatabase(Call call) {
        MongoDatabase database = call.database();
        ClientSession session = call.session();
        List<BsonDocument> pipeline = call.args.documents("pipeline");
        return Results.documents(options(call, session == null
                ? database.aggregate(pipeline, BsonDocument.class)
                : database.aggregate(session, pipeline, BsonDocument.class)));
    }

    private static AggregateIterable<BsonDocument> options(Call call, AggregateIterable<BsonDocument> aggregate) {
        CommonOptions.integer(call.args, "batchSize", aggregate::batchSize);
        CommonOptions.bool(call.args, "allowDiskUse", aggregate::allowDiskUse);
        CommonOptions.bool(call.args, "bypassDocumentValidation", aggregate::bypassDocumentValidation);
        CommonOptions.hint(call.args, aggregate::hint, aggregate::hintString);
        CommonOptions.collation(call.args, aggregate::collation);
        CommonOptions.document(call.args, "let", aggregate::let);
        CommonOptions.comment(call.args, aggregate::comment);
        CommonOptions.millis(call.args, "maxTimeMS", aggregate::maxTime);
        CommonOptions.millis(call.args, "maxAwaitTimeMS", aggregate::maxAwaitTime);
        call.args.done();
        return aggregate;
    }
}
