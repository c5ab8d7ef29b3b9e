package csharness.executor;

import com.mongodb.event.ConnectionCheckOutFailedEvent;
import com.mongodb.event.ConnectionCheckOutStartedEvent;
import com.mongodb.event.ConnectionCheckedInEvent;
import com.mongodb.event.ConnectionCheckedOutEvent;
import com.mongodb.event.ConnectionClosedEvent;
import com.mongodb.event.ConnectionCreatedEvent;
import com.mongodb.event.ConnectionPoolClearedEvent;
import com.mongodb.event.ConnectionPoolClosedEvent;
import com.mongodb.event.ConnectionPoolCreatedEvent;
import com.mongodb.event.ConnectionPoolListener;
import com.mongodb.event.ConnectionPoolReadyEvent;
import com.mongodb.event.ConnectionReadyEvent;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;

/**
 * The client's connection pool (CMAP) events, through the driver's ConnectionPoolListener, with the CMAP
 * spec's reason names; it also counts the connections checked out, whatever the client observes
 * (connectionsCheckedOut).
 */
final class PoolEvents implements ConnectionPoolListener {
    private final EventLog log;
    final AtomicInteger checkedOut = new AtomicInteger();

    PoolEvents(EventLog log) {
        this.log = log;
    }

    @Override
    public void connectionPoolCreated(ConnectionPoolCreatedEvent event) {
        log.add(event("poolCreatedEvent"));
    }

    @Override
    public void connectionPoolCleared(ConnectionPoolClearedEvent event) {
        BsonDocument document = event("poolClearedEvent");
        if (event.getServiceId() != null) {
            document.put("serviceId", new BsonObjectId(event.getServiceId()));
        }
        log.add(document);
    }

    @Override
    public void connectionPoolReady(ConnectionPoolReadyEvent event) {
        log.add(event("poolReadyEvent"));
    }

    @Override
    public void connectionPoolClosed(ConnectionPoolClosedEvent event) {
        log.add(event("poolClosedEvent"));
    }

    @Override
    public void connectionCheckOutStarted(ConnectionCheckOutStartedEvent event) {
        log.add(event("connectionCheckOutStartedEvent"));
    }

    @Override
    public void connectionCheckedOut(ConnectionCheckedOutEvent event) {
        checkedOut.incrementAndGet();
        log.add(event("connectionCheckedOutEvent"));
    }

    @Override
    public void connectionCheckOutFailed(ConnectionCheckOutFailedEvent event) {
        BsonDocument document = event("connectionCheckOutFailedEvent");
        String reason = switch (event.getReason()) {
            case POOL_CLOSED -> "poolClosed";
            case TIMEOUT -> "timeout";
            case CONNECTION_ERROR -> "connectionError";
            default -> null;
        };
        if (reason != null) {
            document.put("reason", new BsonString(reason));
        }
        log.add(document);
    }

    @Override
    public void connectionCheckedIn(ConnectionCheckedInEvent event) {
        checkedOut.decrementAndGet();
        log.add(event("connectionCheckedInEvent"));
    }

    @Override
    public void connectionCreated(ConnectionCreatedEvent event) {
        log.add(event("connectionCreatedEvent"));
    }

    @Override
    public void connectionReady(ConnectionReadyEvent event) {
        log.add(event("connectionReadyEvent"));
    }

    @Override
    public void connectionClosed(ConnectionClosedEvent event) {
        BsonDocument document = event("connectionClosedEvent");
        String reason = switch (event.getReason()) {
            case STALE -> "stale";
            case IDLE -> "idle";
            case ERROR -> "error";
            case POOL_CLOSED -> "poolClosed";
        };
        document.put("reason", new BsonString(reason));
        log.add(document);
    }

    private static BsonDocument event(String kind) {
        return new BsonDocument("kind", new BsonString(kind));
    }
}
