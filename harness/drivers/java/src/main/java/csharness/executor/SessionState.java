package csharness.executor;

import com.mongodb.ServerAddress;
import com.mongodb.client.ClientSession;
import java.lang.reflect.Field;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A session's state for the harness's session assertions (section 6.6). Pinning and dirtiness are public
 * API; the transaction state is not, so it is read from the driver's session class
 * (com.mongodb.client.internal.ClientSessionImpl: transactionState, messageSentInCurrentTransaction), and
 * the executor offers session_state only when this release has those fields.
 */
final class SessionState {
    private static final String SESSION_CLASS = "com.mongodb.client.internal.ClientSessionImpl";
    private static final Field STATE = field("transactionState");
    private static final Field MESSAGE_SENT = field("messageSentInCurrentTransaction");

    private SessionState() {}

    static boolean available() {
        return STATE != null && MESSAGE_SENT != null;
    }

    static BsonDocument of(ClientSession session) {
        BsonDocument state = new BsonDocument("transactionState", new BsonString(transactionState(session)));
        state.put("pinned", BsonBoolean.valueOf(session.getPinnedServerAddress() != null));
        state.put("dirty", BsonBoolean.valueOf(session.getServerSession().isMarkedDirty()));
        return state;
    }

    static BsonValue pinnedAddress(ClientSession session) {
        ServerAddress address = session.getPinnedServerAddress();
        if (address == null) {
            return BsonNull.VALUE;
        }
        BsonDocument document = new BsonDocument("host", new BsonString(address.getHost()));
        document.put("port", new BsonInt32(address.getPort()));
        return document;
    }

    private static String transactionState(ClientSession session) {
        if (!available() || !STATE.getDeclaringClass().isInstance(session)) {
            throw ExecutorError.notImplemented("this driver release's sessions do not expose their transaction state");
        }
        try {
            String state = String.valueOf(STATE.get(session));
            return switch (state) {
                case "NONE" -> "none";
                case "IN" -> MESSAGE_SENT.getBoolean(session) ? "in_progress" : "starting";
                case "COMMITTED" -> "committed";
                case "ABORTED" -> "aborted";
                default -> throw ExecutorError.internal("unknown transaction state " + state);
            };
        } catch (IllegalAccessException error) {
            throw ExecutorError.internal("cannot read the session's transaction state: " + error);
        }
    }

    private static Field field(String name) {
        try {
            Field field = Class.forName(SESSION_CLASS).getDeclaredField(name);
            field.setAccessible(true);
            return field;
        } catch (ReflectiveOperationException | RuntimeException missing) {
            System.err.println("java executor: no " + SESSION_CLASS + "." + name + ": " + missing);
            return null;
        }
    }
}
