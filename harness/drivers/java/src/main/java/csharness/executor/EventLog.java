package csharness.executor;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/**
 * What one client observed (section 6.6): one list per event family, in the order the driver published
 * (appended under the log's lock, since the driver publishes from its own threads), holding only the kinds
 * the client's observeEvents names. Reading is not draining.
 */
final class EventLog {
    private final Set<String> observed;
    private final List<BsonDocument> command = new ArrayList<>();
    private final List<BsonDocument> cmap = new ArrayList<>();
    private final List<BsonDocument> sdam = new ArrayList<>();

    EventLog(Set<String> observed) {
        this.observed = observed;
    }

    boolean observes(String kind) {
        return observed.contains(kind);
    }

    /** Keeps {@code event} (whose "kind" names it) when the client observes its kind. */
    void add(BsonDocument event) {
        String kind = event.getString("kind").getValue();
        if (!observed.contains(kind)) {
            return;
        }
        List<BsonDocument> family = family(kind);
        synchronized (this) {
            family.add(event);
        }
    }

    /** Every event of {@code eventType} ("command", "cmap", "sdam") observed so far, in order. */
    synchronized BsonArray events(String eventType) {
        List<BsonDocument> family = switch (eventType) {
            case "command" -> command;
            case "cmap" -> cmap;
            case "sdam" -> sdam;
            default -> throw ExecutorError.notImplemented("event family '" + eventType + "' is not implemented");
        };
        return new BsonArray(new ArrayList<>(family));
    }

    private List<BsonDocument> family(String kind) {
        return switch (Vocabulary.EVENT_FAMILIES.getOrDefault(kind, "sdam")) {
            case "command" -> command;
            case "cmap" -> cmap;
            default -> sdam;
        };
    }
}
