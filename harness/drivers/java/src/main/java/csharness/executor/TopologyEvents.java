package csharness.executor;

import com.mongodb.connection.ClusterConnectionMode;
import com.mongodb.connection.ClusterDescription;
import com.mongodb.connection.ServerDescription;
import com.mongodb.event.ClusterClosedEvent;
import com.mongodb.event.ClusterDescriptionChangedEvent;
import com.mongodb.event.ClusterListener;
import com.mongodb.event.ClusterOpeningEvent;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import com.mongodb.event.ServerHeartbeatStartedEvent;
import com.mongodb.event.ServerHeartbeatSucceededEvent;
import com.mongodb.event.ServerListener;
import com.mongodb.event.ServerMonitorListener;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;

/**
 * The client's SDAM events (section 6.6) through the driver's cluster, server and server-monitor listeners;
 * descriptions are reduced to their SDAM spec type names.
 */
final class TopologyEvents implements ClusterListener, ServerListener, ServerMonitorListener {
    private final EventLog log;

    TopologyEvents(EventLog log) {
        this.log = log;
    }

    @Override
    public void clusterOpening(ClusterOpeningEvent event) {
        log.add(event("topologyOpeningEvent"));
    }

    @Override
    public void clusterClosed(ClusterClosedEvent event) {
        log.add(event("topologyClosedEvent"));
    }

    @Override
    public void clusterDescriptionChanged(ClusterDescriptionChangedEvent event) {
        BsonDocument document = event("topologyDescriptionChangedEvent");
        document.put("previousDescription", type(topologyType(event.getPreviousDescription())));
        document.put("newDescription", type(topologyType(event.getNewDescription())));
        log.add(document);
    }

    @Override
    public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
        BsonDocument document = event("serverDescriptionChangedEvent");
        document.put("previousDescription", type(serverType(event.getPreviousDescription())));
        document.put("newDescription", type(serverType(event.getNewDescription())));
        log.add(document);
    }

    @Override
    public void serverHearbeatStarted(ServerHeartbeatStartedEvent event) {
        log.add(heartbeat("serverHeartbeatStartedEvent", event.isAwaited()));
    }

    @Override
    public void serverHeartbeatSucceeded(ServerHeartbeatSucceededEvent event) {
        log.add(heartbeat("serverHeartbeatSucceededEvent", event.isAwaited()));
    }

    @Override
    public void serverHeartbeatFailed(ServerHeartbeatFailedEvent event) {
        log.add(heartbeat("serverHeartbeatFailedEvent", event.isAwaited()));
    }

    private static BsonDocument heartbeat(String kind, boolean awaited) {
        BsonDocument document = event(kind);
        document.put("awaited", BsonBoolean.valueOf(awaited));
        return document;
    }

    private static BsonDocument event(String kind) {
        return new BsonDocument("kind", new BsonString(kind));
    }

    private static BsonDocument type(String name) {
        return new BsonDocument("type", new BsonString(name));
    }

    static String serverType(ServerDescription description) {
        return switch (description.getType()) {
            case STANDALONE -> "Standalone";
            case REPLICA_SET_PRIMARY -> "RSPrimary";
            case REPLICA_SET_SECONDARY -> "RSSecondary";
            case REPLICA_SET_ARBITER -> "RSArbiter";
            case REPLICA_SET_OTHER -> "RSOther";
            case REPLICA_SET_GHOST -> "RSGhost";
            case SHARD_ROUTER -> "Mongos";
            case LOAD_BALANCER -> "LoadBalancer";
            default -> "Unknown";
        };
    }

    static String topologyType(ClusterDescription description) {
        if (description.getConnectionMode() == ClusterConnectionMode.SINGLE) {
            return "Single";
        }
        return switch (description.getType()) {
            case REPLICA_SET -> hasPrimary(description) ? "ReplicaSetWithPrimary" : "ReplicaSetNoPrimary";
            case SHARDED -> "Sharded";
            case LOAD_BALANCED -> "LoadBalanced";
            case STANDALONE -> "Single";
            default -> "Unknown";
        };
    }

    private static boolean hasPrimary(ClusterDescription description) {
        for (ServerDescription server : description.getServerDescriptions()) {
            if (server.isPrimary()) {
                return true;
            }
        }
        return false;
    }
}
