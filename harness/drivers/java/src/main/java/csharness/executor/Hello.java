package csharness.executor;

import com.mongodb.client.MongoClients;
import com.mongodb.connection.ServerDescription;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The handshake's result (section 4): the driver release actually loaded (its jar's Build-Version),
 * what this executor can answer beyond operations, the operation names of its table, and the driver's
 * heartbeat and wire-version limits. Written as plain JSON.
 */
final class Hello {
    static final int PROTOCOL_VERSION = 1;
    /** The heartbeat a scope's fast heartbeats set (and the driver's minimum heartbeat, lowered with it). */
    static final int FAST_HEARTBEAT_MS = 50;
    /** Section 6.4.1's iterator mode: the Iterable's own iterator (for-each). */
    static final String ITERATOR = "iterator";
    /**
     * The ways this executor consumes a change stream (section 6.4.1), the default first: cursor().tryNext()
     * for next and tryNext alike (ChangeStreamOperations says why), the Iterable's iterator for iterator.
     */
    static final List<String> ITERATION_MODES = List.of("next", "tryNext", ITERATOR);

    private Hello() {}

    static BsonDocument result() {
        BsonDocument driver = new BsonDocument("name", new BsonString("java"));
        driver.put("version", new BsonString(driverVersion()));
        driver.put("language", new BsonString("java"));
        BsonDocument result = new BsonDocument("protocolVersion", new BsonInt32(PROTOCOL_VERSION));
        result.put("driver", driver);
        result.put("capabilities", strings(capabilities()));
        result.put("operations", strings(new ArrayList<>(Operations.names())));
        result.put("fastHeartbeatMS", new BsonInt32(FAST_HEARTBEAT_MS));
        result.put("minWireVersion", minWireVersion());
        result.put("iterationModes", strings(ITERATION_MODES));
        return result;
    }

    private static List<String> capabilities() {
        List<String> capabilities = new ArrayList<>(List.of(
                "session_lsid",
                "session_pinned_address",
                "connections_checked_out",
                "cmap_events",
                "sdam_events",
                "command_log"));
        if (SessionState.available()) {
            capabilities.add("session_state");
        }
        return capabilities;
    }

    private static BsonArray strings(List<String> names) {
        List<BsonValue> values = new ArrayList<>();
        for (String name : names) {
            values.add(new BsonString(name));
        }
        return new BsonArray(values);
    }

    /** The release in the manifest of the jar MongoClients was loaded from. */
    static String driverVersion() {
        try {
            Path jar = Path.of(MongoClients.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            try (JarFile file = new JarFile(jar.toFile())) {
                Attributes attributes = file.getManifest().getMainAttributes();
                String version = attributes.getValue("Build-Version");
                if (version == null) {
                    version = attributes.getValue("Bundle-Version");
                }
                if (version != null && !version.isBlank()) {
                    return version;
                }
            }
        } catch (IOException | URISyntaxException | RuntimeException unreadable) {
            System.err.println("java executor: cannot read the driver jar's manifest: " + unreadable);
        }
        throw ExecutorError.internal("cannot tell which mongodb-driver-sync release is loaded");
    }

    private static BsonValue minWireVersion() {
        try {
            return new BsonInt32(ServerDescription.class.getField("MIN_DRIVER_WIRE_VERSION").getInt(null));
        } catch (ReflectiveOperationException missing) {
            return BsonNull.VALUE;
        }
    }
}
