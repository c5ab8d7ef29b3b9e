package csharness.executor;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * What one request is answered with: a result (with its kind and, for a driver object, the entity id it is
 * kept under) or an error document; withTransaction adds the nested operations it ran.
 */
record Reply(boolean ok, BsonValue result, String resultKind, String entity, BsonDocument error, BsonArray nested) {

    static Reply value(BsonValue result) {
        return new Reply(true, result == null ? BsonNull.VALUE : result, null, null, null, null);
    }

    static Reply documents(BsonArray documents) {
        return new Reply(true, documents, "documents", null, null, null);
    }

    static Reply entity(String id) {
        return new Reply(true, BsonNull.VALUE, "entity", id, null, null);
    }

    static Reply failure(BsonDocument error) {
        return new Reply(false, null, null, null, error, null);
    }

    Reply withNested(BsonArray attempts) {
        return new Reply(ok, result, resultKind, entity, error, attempts);
    }
}
