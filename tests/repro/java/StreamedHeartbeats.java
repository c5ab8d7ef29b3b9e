import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerHeartbeatFailedEvent;
import com.mongodb.event.ServerListener;
import com.mongodb.event.ServerMonitorListener;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * Not a Java driver deviation: the server's. SecantusDB 0.7 answers an awaitable hello sent with exhaustAllowed
 * with streamed replies that all carry responseTo = the request's id; mongod chains them (each streamed reply
 * answers the previous reply's requestID), and the Java driver checks that chain. So every second streamed
 * heartbeat fails ("The responseTo (N) in the response does not match the requestId (M)"), the server turns
 * Unknown, the pool is cleared, and an operation in flight fails with a connection error and is resumed. With the
 * harness's fast heartbeats (heartbeatFrequencyMS 50) this happens every ~150 ms of a client's life, and tests that
 * count commands see an extra resume. exhaust_response_to.py shows the replies' headers without any driver.
 *
 *   java -cp <driver jars>:. StreamedHeartbeats mongodb://127.0.0.1:27999/ 50 2000
 */
public class StreamedHeartbeats {
    public static void main(String[] args) throws Exception {
        long every = Long.parseLong(args[1]);
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(args[0]))
                .applyToServerSettings(builder -> builder
                        .heartbeatFrequency(every, TimeUnit.MILLISECONDS)
                        .minHeartbeatFrequency(every, TimeUnit.MILLISECONDS)
                        .addServerMonitorListener(new ServerMonitorListener() {
                            @Override
                            public void serverHeartbeatFailed(ServerHeartbeatFailedEvent event) {
                                System.out.println("heartbeat failed (awaited " + event.isAwaited() + "): "
                                        + event.getThrowable());
                            }
                        })
                        .addServerListener(new ServerListener() {
                            @Override
                            public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                                System.out.println("server is now " + event.getNewDescription().getType());
                            }
                        }))
                .build();
        try (MongoClient client = MongoClients.create(settings)) {
            client.getDatabase("repro").runCommand(new Document("ping", 1));
            Thread.sleep(Long.parseLong(args[2]));
        }
    }
}
