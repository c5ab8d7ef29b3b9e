package csharness.executor;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCursor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One test's entities (section 5): clients, databases, collections, sessions, change streams, cursors and
 * saved results, by the test's ids. Closing it closes streams and cursors, ends sessions and closes
 * clients, each step on its own so a half-broken scope still closes.
 */
final class Scope {
    final String id;
    final String uri;
    final long iterationTimeoutMS;
    final Long heartbeatFrequencyMS;
    /** How every change stream of the scope is consumed: one of Hello.ITERATION_MODES (section 6.4.1). */
    final String iterationMode;
    /** Every command event of the scope's clients, in publication order (section 6.4.2). */
    final CommandLog commandLog = new CommandLog();
    private final Map<String, Object> entities = new LinkedHashMap<>();
    /** The iterator-mode state of each change stream opened through iterator(), by the iterator itself. */
    private final Map<MongoCursor<?>, StreamIterator> iterators = new IdentityHashMap<>();
    private long results;

    Scope(String id, String uri, long iterationTimeoutMS, Long heartbeatFrequencyMS, String iterationMode) {
        this.id = id;
        this.uri = uri;
        this.iterationTimeoutMS = iterationTimeoutMS;
        this.heartbeatFrequencyMS = heartbeatFrequencyMS;
        this.iterationMode = iterationMode;
    }

    Object entity(String entityId) {
        Object entity = entities.get(entityId);
        if (entity == null) {
            throw ExecutorError.invalidRequest("scope '" + id + "' has no entity '" + entityId + "'");
        }
        return entity;
    }

    <T> T entity(String entityId, Class<T> type, String what) {
        Object entity = entity(entityId);
        if (!type.isInstance(entity)) {
            throw ExecutorError.invalidRequest("entity '" + entityId + "' is not a " + what);
        }
        return type.cast(entity);
    }

    boolean has(String entityId) {
        return entities.containsKey(entityId);
    }

    void put(String entityId, Object entity) {
        if (entities.containsKey(entityId)) {
            throw ExecutorError.invalidRequest("scope '" + id + "' already has an entity '" + entityId + "'");
        }
        entities.put(entityId, entity);
    }

    void keepIterator(MongoCursor<?> iterator, StreamIterator state) {
        iterators.put(iterator, state);
    }

    /** The iterator-mode state of a change stream opened through iterator(); null for any other cursor. */
    StreamIterator iterator(MongoCursor<?> cursor) {
        return iterators.get(cursor);
    }

    /** A name of the executor's own for a driver object returned without saveResultAsEntity (section 3). */
    String resultName() {
        return "$result" + (++results);
    }

    /** A saved result replaces an earlier one of the same id (the unified format allows re-saving). */
    void save(String entityId, Object entity) {
        entities.put(entityId, entity);
    }

    void close() {
        List<Object> all = new ArrayList<>(entities.values());
        for (Object entity : all) {
            if (entity instanceof MongoCursor<?> cursor) {
                StreamIterator iterator = iterators.get(cursor);
                quietly(iterator != null ? iterator::close : cursor::close);
            }
        }
        for (StreamIterator iterator : iterators.values()) {
            quietly(iterator::close); // one only a replaced saved result still named; closing is idempotent
        }
        iterators.clear();
        for (Object entity : all) {
            if (entity instanceof SessionEntity session) {
                quietly(session.session()::close);
            }
        }
        for (Object entity : all) {
            if (entity instanceof ClientEntity client) {
                quietly(client.client::close);
            }
        }
        entities.clear();
    }

    private static void quietly(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException error) {
            System.err.println("java executor: while closing a scope: " + error);
        }
    }

    /** A session entity: the driver's session, its client, and its lsid, kept from creation (6.1). */
    record SessionEntity(ClientSession session, ClientEntity client, org.bson.BsonDocument lsid) {}
}
