package csharness.executor;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The operation table: a unified-format name and an entity type lead to the code that runs it (the
 * "operations dispatched by name" of the project's style). hello lists its names; a name or an entity
 * type it lacks is answered notImplemented.
 */
final class Operations {
    private static final Map<String, Map<Class<?>, Operation>> TABLE = new LinkedHashMap<>();

    static {
        CollectionOperations.register();
        DatabaseOperations.register();
        ClientOperations.register();
        ChangeStreamOperations.register();
        SessionOperations.register();
    }

    private Operations() {}

    static void add(String name, Class<?> targetType, Operation operation) {
        TABLE.computeIfAbsent(name, unused -> new LinkedHashMap<>()).put(targetType, operation);
    }

    static Set<String> names() {
        return new TreeSet<>(TABLE.keySet());
    }

    static Operation find(String name, Object target, String object) {
        Map<Class<?>, Operation> byType = TABLE.get(name);
        if (byType == null) {
            throw ExecutorError.notImplemented("operation '" + name + "' is not implemented by the Java executor");
        }
        for (Map.Entry<Class<?>, Operation> entry : byType.entrySet()) {
            if (entry.getKey().isInstance(target)) {
                return entry.getValue();
            }
        }
        throw ExecutorError.notImplemented(
                "operation '" + name + "' on '" + object + "' (" + target.getClass().getSimpleName()
                        + ") is not implemented by the Java executor");
    }
}
