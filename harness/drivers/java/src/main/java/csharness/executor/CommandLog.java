package csharness.executor;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * The scope's command log (section 6.4.2): every command event of every client of the scope, whatever the client
 * observes, in one list. The driver publishes from the threads that run the operations (and a stream's iterator
 * step runs on its own), so entries are appended under one lock across the scope's clients: the list's order is
 * the order the events were published in, which pairs each reply with what came before it. Never trimmed while the
 * scope is open; reading is not draining.
 */
final class CommandLog {
    private final List<BsonDocument> entries = new ArrayList<>();

    synchronized void add(BsonDocument entry) {
        entries.add(entry);
    }

    /**
     * commandLog: the entries from index {@code from} to the end (none when nothing is new). An index past the end
     * is refused: the harness lost count of what it read, and answering [] would hide every entry before it.
     */
    synchronized BsonArray from(long from) {
        if (from < 0 || from > entries.size()) {
            throw ExecutorError.invalidRequest("commandLog: params.from must be an index from 0 to the log's length ("
                    + entries.size() + "), got " + from);
        }
        return new BsonArray(new ArrayList<>(entries.subList((int) from, entries.size())));
    }
}
