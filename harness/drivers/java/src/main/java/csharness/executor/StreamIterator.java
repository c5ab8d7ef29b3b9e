package csharness.executor;

import com.mongodb.client.MongoCursor;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.bson.BsonDocument;

/**
 * A change stream consumed in the iterator mode (section 6.4.1): the one Iterator that the stream's Iterable
 * gave at createChangeStream (iterator() is cursor(), which sends a new aggregate, so a new iterator per call
 * would be a new stream), stepped as a for-each loop steps it: hasNext(), then next().
 *
 * <p>hasNext() blocks until a change, an error or the server's end of the cursor, and nothing can stop it
 * without changing the stream (an interrupt fails the connection; close() ends the stream). So the step runs on
 * a thread of the stream's own and the budget is a wait for it (section 6.4, "where it races a timer against an
 * iteration it cannot cancel ... it keeps that iteration and takes its outcome at the next call"): a step still
 * running when the budget ends is kept, and the next iteration takes its outcome, so a change it brings is not
 * lost and the stream stays usable. Only one step runs at a time, and nothing else touches the iterator while one
 * runs (the driver refuses a second operation on a cursor while one is in progress), except close(), which the
 * driver allows from another thread: the cursor is killed when the running getMore returns.
 */
final class StreamIterator {
    private final MongoCursor<BsonDocument> iterator;
    private ExecutorService worker;
    /** The step still running from an earlier iteration whose budget ended; its outcome is the next one's. */
    private Future<Optional<BsonDocument>> pending;

    StreamIterator(MongoCursor<BsonDocument> iterator) {
        this.iterator = iterator;
    }

    /**
     * iterateUntilDocumentOrError: the next step's change; the driver's error; noChange when the iterator ended
     * (hasNext() false: the server closed the stream, section 6.4's closed cursor) or the budget ended first.
     */
    BsonDocument untilDocument(long budgetMS) {
        if (pending == null) {
            pending = worker().submit(() -> iterator.hasNext() ? Optional.of(iterator.next()) : Optional.empty());
        }
        Optional<BsonDocument> step = await(budgetMS);
        if (step == null) {
            throw ExecutorError.noChange("no document arrived within " + ChangeStreamOperations.seconds(budgetMS)
                    + " (the iterator's hasNext() goes on; the next iteration takes its outcome)");
        }
        if (step.isEmpty()) {
            throw ExecutorError.noChange("the change stream's iterator ended (hasNext() is false: the server closed"
                    + " the stream's cursor): no document can arrive");
        }
        return step.get();
    }

    /**
     * iterateOnce, as the next mode's (section 6.4.1): the iterator's own tryNext() (MongoCursor's non-blocking
     * call). A step kept from an earlier budget is still iterating: its outcome is this iteration's, waited for
     * up to the budget, and null (no document) if it is still running then.
     */
    BsonDocument once(long budgetMS) {
        if (pending != null) {
            Optional<BsonDocument> step = await(budgetMS);
            return step == null ? null : step.orElse(null);
        }
        return iterator.tryNext();
    }

    /**
     * close: the iterator's close(), which the driver allows while a step runs; the worker ends after it. A later
     * iteration gets a new worker, and from the driver the error of a closed cursor.
     */
    void close() {
        try {
            iterator.close();
        } finally {
            if (worker != null) {
                worker.shutdown(); // never shutdownNow: an interrupt would fail the running step's connection
                worker = null;
            }
        }
    }

    /** The pending step's outcome (and no step pending any more), or null while it still runs after budgetMS. */
    private Optional<BsonDocument> await(long budgetMS) {
        try {
            Optional<BsonDocument> step = pending.get(budgetMS, TimeUnit.MILLISECONDS);
            pending = null;
            return step;
        } catch (TimeoutException stillRunning) {
            return null;
        } catch (ExecutionException failed) {
            pending = null;
            Throwable cause = failed.getCause();
            if (cause instanceof RuntimeException driverError) {
                throw driverError;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw ExecutorError.internal("the change stream's iterator failed: " + cause);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw ExecutorError.internal("interrupted while waiting for the change stream's iterator");
        }
    }

    private ExecutorService worker() {
        if (worker == null) {
            worker = Executors.newSingleThreadExecutor(step -> {
                Thread thread = new Thread(step, "change-stream-iterator");
                thread.setDaemon(true); // EOF exits without waiting for a step that blocks on an idle stream
                return thread;
            });
        }
        return worker;
    }
}
