package csharness.executor;

import org.bson.BsonArray;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * What an operation produced (section 3's resultKind): a plain value, the documents read through a cursor,
 * or a driver object (a change stream, a cursor) that the scope keeps as an entity; withTransaction adds
 * the nested operations it ran (section 6.5).
 */
record Outcome(BsonValue value, String kind, Object driverObject, BsonArray nested) {
    static final Outcome NONE = value(BsonNull.VALUE);

    static Outcome value(BsonValue value) {
        return new Outcome(value == null ? BsonNull.VALUE : value, "value", null, null);
    }

    static Outcome documents(BsonArray documents) {
        return new Outcome(documents, "documents", null, null);
    }

    static Outcome entity(Object driverObject) {
        return new Outcome(BsonNull.VALUE, "entity", driverObject, null);
    }

    Outcome withNested(BsonArray operations) {
        return new Outcome(value, kind, driverObject, operations);
    }
}
