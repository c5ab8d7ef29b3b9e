package csharness.executor;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ServerApi;
import com.mongodb.ServerApiVersion;
import com.mongodb.client.MongoClients;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Creates a client entity (section 6.1): its connection string, the scope's fast heartbeats unless its
 * uriOptions set heartbeatFrequencyMS, its serverApi, and the listeners that record what it observes (and every
 * command event in the scope's command log).
 * Every other key of the entity is refused with notImplemented.
 */
final class Clients {
    private static final Set<String> KEYS = Set.of(
            "id",
            "uriOptions",
            "useMultipleMongoses",
            "observeEvents",
            "ignoreCommandMonitoringEvents",
            "observeSensitiveCommands",
            "serverApi");

    private Clients() {}

    static ClientEntity create(Scope scope, BsonDocument spec) {
        for (String key : spec.keySet()) {
            if (!KEYS.contains(key)) {
                throw ExecutorError.notImplemented("client option '" + key + "' is not implemented by the Java executor");
            }
        }
        BsonDocument uriOptions = spec.containsKey("uriOptions") ? spec.getDocument("uriOptions") : new BsonDocument();
        boolean firstHostOnly = spec.containsKey("useMultipleMongoses")
                && !spec.getBoolean("useMultipleMongoses").getValue();
        EventLog log = new EventLog(observed(spec));
        CommandEvents commands = new CommandEvents(
                log,
                scope.commandLog,
                spec.getString("id").getValue(),
                strings(spec, "ignoreCommandMonitoringEvents"));
        PoolEvents pool = new PoolEvents(log);
        TopologyEvents topology = new TopologyEvents(log);
        String uri = UriOptions.merge(scope.uri, uriOptions, firstHostOnly);
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .addCommandListener(commands)
                .applyToConnectionPoolSettings(builder -> builder.addConnectionPoolListener(pool))
                .applyToClusterSettings(builder -> builder.addClusterListener(topology))
                .applyToServerSettings(builder -> builder.addServerListener(topology).addServerMonitorListener(topology));
        if (scope.heartbeatFrequencyMS != null && !hasKey(uriOptions, "heartbeatFrequencyMS")) {
            long every = scope.heartbeatFrequencyMS;
            settings.applyToServerSettings(builder -> builder
                    .heartbeatFrequency(every, TimeUnit.MILLISECONDS)
                    .minHeartbeatFrequency(every, TimeUnit.MILLISECONDS));
        }
        if (spec.containsKey("serverApi")) {
            settings.serverApi(serverApi(spec.getDocument("serverApi")));
        }
        return new ClientEntity(MongoClients.create(settings.build()), log, pool);
    }

    private static Set<String> observed(BsonDocument spec) {
        Set<String> observed = strings(spec, "observeEvents");
        for (String kind : observed) {
            if (!Vocabulary.EVENT_FAMILIES.containsKey(kind)) {
                throw ExecutorError.notImplemented("observing '" + kind + "' is not implemented by the Java executor");
            }
        }
        return observed;
    }

    /** A list of names in the entity (observeEvents, ignoreCommandMonitoringEvents); none when absent. */
    private static Set<String> strings(BsonDocument spec, String key) {
        Set<String> names = new HashSet<>();
        if (!spec.containsKey(key)) {
            return names;
        }
        for (BsonValue name : spec.getArray(key)) {
            names.add(name.asString().getValue());
        }
        return names;
    }

    private static boolean hasKey(BsonDocument options, String key) {
        for (String name : options.keySet()) {
            if (name.equalsIgnoreCase(key)) {
                return true;
            }
        }
        return false;
    }

    private static ServerApi serverApi(BsonDocument spec) {
        ServerApi.Builder builder = ServerApi.builder();
        for (String key : spec.keySet()) {
            switch (key) {
                case "version" -> builder.version(ServerApiVersion.findByValue(spec.getString(key).getValue()));
                case "strict" -> builder.strict(spec.getBoolean(key).getValue());
                case "deprecationErrors" -> builder.deprecationErrors(spec.getBoolean(key).getValue());
                default -> throw ExecutorError.notImplemented("serverApi option '" + key + "' is not implemented");
            }
        }
        return builder.build();
    }
}
