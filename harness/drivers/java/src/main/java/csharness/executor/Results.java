package csharness.executor;

import com.mongodb.bulk.BulkWriteInsert;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.bulk.BulkWriteUpsert;
import com.mongodb.client.MongoIterable;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.InsertManyResult;
import com.mongodb.client.result.InsertOneResult;
import com.mongodb.client.result.UpdateResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/** The driver's results in the unified format's shapes (section 6.2). */
final class Results {
    private Results() {}

    static BsonDocument insertOne(InsertOneResult result) {
        BsonDocument document = new BsonDocument();
        if (result.wasAcknowledged() && result.getInsertedId() != null) {
            document.put("insertedId", result.getInsertedId());
        }
        return document;
    }

    static BsonDocument insertMany(InsertManyResult result) {
        BsonDocument ids = new BsonDocument();
        for (Map.Entry<Integer, BsonValue> id : result.getInsertedIds().entrySet()) {
            ids.put(Integer.toString(id.getKey()), id.getValue());
        }
        return new BsonDocument("insertedIds", ids);
    }

    static BsonDocument update(UpdateResult result) {
        BsonDocument document = new BsonDocument();
        if (!result.wasAcknowledged()) {
            return document;
        }
        document.put("matchedCount", Values.count(result.getMatchedCount()));
        document.put("modifiedCount", Values.count(result.getModifiedCount()));
        document.put("upsertedCount", Values.count(result.getUpsertedId() == null ? 0 : 1));
        if (result.getUpsertedId() != null) {
            document.put("upsertedId", result.getUpsertedId());
        }
        return document;
    }

    static BsonDocument delete(DeleteResult result) {
        BsonDocument document = new BsonDocument();
        if (result.wasAcknowledged()) {
            document.put("deletedCount", Values.count(result.getDeletedCount()));
        }
        return document;
    }

    static BsonDocument bulkWrite(BulkWriteResult result) {
        BsonDocument document = new BsonDocument();
        if (!result.wasAcknowledged()) {
            return document;
        }
        document.put("deletedCount", Values.count(result.getDeletedCount()));
        document.put("insertedCount", Values.count(result.getInsertedCount()));
        document.put("matchedCount", Values.count(result.getMatchedCount()));
        document.put("modifiedCount", Values.count(result.getModifiedCount()));
        document.put("upsertedCount", Values.count(result.getUpserts().size()));
        BsonDocument inserted = new BsonDocument();
        for (BulkWriteInsert insert : result.getInserts()) {
            inserted.put(Integer.toString(insert.getIndex()), insert.getId());
        }
        document.put("insertedIds", inserted);
        BsonDocument upserted = new BsonDocument();
        for (BulkWriteUpsert upsert : result.getUpserts()) {
            upserted.put(Integer.toString(upsert.getIndex()), upsert.getId());
        }
        document.put("upsertedIds", upserted);
        return document;
    }

    /** Every document a cursor-backed iterable gives, read to the end (resultKind "documents"). */
    static Outcome documents(MongoIterable<BsonDocument> iterable) {
        return Outcome.documents(new BsonArray(new ArrayList<>(iterable.into(new ArrayList<>()))));
    }

    static BsonArray strings(MongoIterable<String> names) {
        List<BsonValue> values = new ArrayList<>();
        for (String name : names) {
            values.add(new BsonString(name));
        }
        return new BsonArray(values);
    }
}
