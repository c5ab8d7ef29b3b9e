package csharness.executor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The harness's shared vocabulary (docs/executor-protocol.md section 12), read once at start-up from the file the
 * harness names in HARNESS_VOCABULARY (section 1): the event names and their families are not copied here.
 */
final class Vocabulary {
    /** The unified format's event name -> its family ("command", "cmap", "sdam"), as an events request names it. */
    static final Map<String, String> EVENT_FAMILIES = eventFamilies(load());

    private Vocabulary() {}

    private static BsonDocument load() {
        String path = System.getenv("HARNESS_VOCABULARY");
        if (path == null || path.isEmpty()) {
            throw new IllegalStateException(
                    "HARNESS_VOCABULARY names no vocabulary file (the harness sets it, docs/executor-protocol.md section 1)");
        }
        try {
            return BsonDocument.parse(Files.readString(Path.of(path)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, String> eventFamilies(BsonDocument vocabulary) {
        Map<String, String> families = new HashMap<>();
        for (Map.Entry<String, BsonValue> family : vocabulary.getDocument("events").entrySet()) {
            for (BsonValue name : family.getValue().asArray()) {
                families.put(name.asString().getValue(), family.getKey());
            }
        }
        return Map.copyOf(families);
    }
}
