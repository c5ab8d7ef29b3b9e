package csharness.executor;

import com.mongodb.client.ChangeStreamIterable;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.MongoIterable;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.FullDocumentBeforeChange;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Change streams and cursors (section 6.4). createChangeStream opens the stream before it replies: the
 * driver's watch() is lazy, and its cursor() sends the aggregate. The stream reads BsonDocument, so a
 * change document keeps every field and type the server sent. iterateUntilDocumentOrError gives up after the
 * scope's iteration budget, or the request's budgetMS (section 6.4.2), in every mode alike.
 *
 * <p>The scope's iteration mode (section 6.4.1) picks the driver's API a stream is consumed through:
 * <ul>
 * <li>{@code next} (the default) and {@code tryNext}: the MongoChangeStreamCursor of cursor(), iterated with its
 * non-blocking tryNext() (which resumes by itself), the budget checked between calls: the next row of 6.4.1 takes
 * the non-blocking form where the driver has one (the blocking next() and hasNext() have no seam where the
 * budget could be checked), so in this driver the two modes make the same calls.
 * <li>{@code iterator}: the Iterable's for-each protocol. iterator() is cursor() (a new aggregate on every call),
 * so it is a way of opening the stream, not of reading one opened by cursor(): createChangeStream opens the
 * stream with iterator() and keeps that one iterator, stepped with hasNext() then next() ({@link StreamIterator}).
 * </ul>
 */
final class ChangeStreamOperations {
    private ChangeStreamOperations() {}

    static void register() {
        Operations.add("createChangeStream", MongoCollection.class, ChangeStreamOperations::create);
        Operations.add("createChangeStream", MongoDatabase.class, ChangeStreamOperations::create);
        Operations.add("createChangeStream", ClientEntity.class, ChangeStreamOperations::create);
        Operations.add("iterateUntilDocumentOrError", MongoCursor.class, ChangeStreamOperations::iterateUntilDocument);
        Operations.add("iterateOnce", MongoCursor.class, ChangeStreamOperations::iterateOnce);
        Operations.add("close", MongoCursor.class, ChangeStreamOperations::close);
        Operations.add("getResumeToken", MongoChangeStreamCursor.class, ChangeStreamOperations::getResumeToken);
    }

    @SuppressWarnings("unchecked")
    private static Outcome create(Call call) {
        List<BsonDocument> pipeline = call.args.has("pipeline") ? call.args.documents("pipeline") : List.of();
        ChangeStreamIterable<BsonDocument> stream;
        if (call.targets(MongoCollection.class)) {
            MongoCollection<BsonDocument> collection = call.collection();
            ClientSession session = call.session();
            stream = session == null
                    ? collection.watch(pipeline, BsonDocument.class)
                    : collection.watch(session, pipeline, BsonDocument.class);
        } else if (call.targets(MongoDatabase.class)) {
            MongoDatabase database = call.database();
            ClientSession session = call.session();
            stream = session == null
                    ? database.watch(pipeline, BsonDocument.class)
                    : database.watch(session, pipeline, BsonDocument.class);
        } else {
            var cluster = call.cluster();
            ClientSession session = call.session();
            stream = session == null
                    ? cluster.watch(pipeline, BsonDocument.class)
                    : cluster.watch(session, pipeline, BsonDocument.class);
        }
        options(call.args, stream);
        call.args.done();
        MongoIterable<BsonDocument> changes = stream.withDocumentClass(BsonDocument.class);
        if (Hello.ITERATOR.equals(call.scope.iterationMode)) {
            // for (BsonDocument change : changes) starts here: iterator() sends the aggregate.
            MongoCursor<BsonDocument> iterator = changes.iterator();
            call.scope.keepIterator(iterator, new StreamIterator(iterator));
            return Outcome.entity(iterator);
        }
        return Outcome.entity((MongoChangeStreamCursor<BsonDocument>) changes.cursor());
    }

    private static void options(Arguments args, ChangeStreamIterable<BsonDocument> stream) {
        String fullDocument = args.optionalString("fullDocument");
        if (fullDocument != null) {
            stream.fullDocument(FullDocument.fromString(fullDocument));
        }
        String beforeChange = args.optionalString("fullDocumentBeforeChange");
        if (beforeChange != null) {
            stream.fullDocumentBeforeChange(FullDocumentBeforeChange.fromString(beforeChange));
        }
        CommonOptions.document(args, "resumeAfter", stream::resumeAfter);
        CommonOptions.document(args, "startAfter", stream::startAfter);
        BsonValue startAt = args.value("startAtOperationTime");
        if (startAt != null) {
            if (!startAt.isTimestamp()) {
                throw ExecutorError.invalidRequest("startAtOperationTime must be a Timestamp, got " + startAt.getBsonType());
            }
            stream.startAtOperationTime(startAt.asTimestamp());
        }
        CommonOptions.integer(args, "batchSize", stream::batchSize);
        Long maxAwait = args.optionalLong("maxAwaitTimeMS");
        if (maxAwait != null) {
            stream.maxAwaitTime(maxAwait, TimeUnit.MILLISECONDS);
        }
        CommonOptions.bool(args, "showExpandedEvents", stream::showExpandedEvents);
        CommonOptions.collation(args, stream::collation);
        CommonOptions.comment(args, stream::comment);
    }

    @SuppressWarnings("unchecked")
    private static MongoCursor<BsonDocument> cursor(Call call) {
        MongoCursor<BsonDocument> cursor = call.expect(MongoCursor.class, "change stream or cursor");
        call.args.done();
        return cursor;
    }

    private static Outcome iterateUntilDocument(Call call) {
        MongoCursor<BsonDocument> cursor = cursor(call);
        if (!(cursor instanceof MongoChangeStreamCursor)) {
            return Outcome.value(cursor.next());
        }
        long budgetMS = call.iterationBudgetMS(); // a cursor that is not a stream never reads budgetMS
        StreamIterator iterator = call.scope.iterator(cursor);
        if (iterator != null) {
            return Outcome.value(iterator.untilDocument(budgetMS));
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(budgetMS);
        while (true) {
            BsonDocument change = cursor.tryNext();
            if (change != null) {
                return Outcome.value(change);
            }
            if (cursor.getServerCursor() == null) {
                // Section 6.4: the server closed the stream (cursor id 0, after an invalidate): nothing can arrive.
                throw ExecutorError.noChange("the server closed the change stream's cursor: no document can arrive");
            }
            if (System.nanoTime() - deadline >= 0) {
                throw ExecutorError.noChange("no document arrived within " + seconds(budgetMS));
            }
        }
    }

    static String seconds(long millis) {
        return millis % 1000 == 0 ? (millis / 1000) + "s" : (millis / 1000.0) + "s";
    }

    private static Outcome iterateOnce(Call call) {
        MongoCursor<BsonDocument> cursor = cursor(call);
        StreamIterator iterator = call.scope.iterator(cursor);
        return Outcome.value(iterator != null ? iterator.once(call.scope.iterationTimeoutMS) : cursor.tryNext());
    }

    private static Outcome close(Call call) {
        MongoCursor<BsonDocument> cursor = cursor(call);
        StreamIterator iterator = call.scope.iterator(cursor);
        if (iterator != null) {
            iterator.close();
        } else {
            cursor.close();
        }
        return Outcome.NONE;
    }

    private static Outcome getResumeToken(Call call) {
        MongoChangeStreamCursor<?> cursor = call.expect(MongoChangeStreamCursor.class, "change stream");
        call.args.done();
        return Outcome.value(cursor.getResumeToken());
    }
}
