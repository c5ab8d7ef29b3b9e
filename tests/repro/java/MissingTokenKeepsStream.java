import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * specs/expectations/drivers/java.yml: prose test 2 (driver side). The change-streams spec: drivers MUST raise an
 * error on the first document received without a resume token, and close the change stream. The Java driver raises
 * MongoChangeStreamException but leaves the stream open: the next iteration sends another getMore (and raises
 * again on the next change without _id) instead of refusing a closed stream.
 *
 * A current server refuses a change without _id itself; run this through the wire proxy that strips it:
 *   python tests/repro/java/shaping_proxy.py unchecked-event-ids 127.0.0.1:27999   (prints URI)
 *   java -cp <driver jars>:. MissingTokenKeepsStream <that URI> mongodb://127.0.0.1:27999/
 */
public class MissingTokenKeepsStream {
    public static void main(String[] args) throws Exception {
        CommandListener printer = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                System.out.println("sent " + event.getCommandName());
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(args[0])).addCommandListener(printer).build();
        try (MongoClient client = MongoClients.create(settings); MongoClient direct = MongoClients.create(args[1])) {
            MongoCollection<Document> writer = direct.getDatabase("repro").getCollection("missing_token");
            writer.drop();
            MongoCollection<Document> collection = client.getDatabase("repro").getCollection("missing_token");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                    collection.watch().maxAwaitTime(200, TimeUnit.MILLISECONDS).cursor()) {
                writer.insertOne(new Document("n", 1));
                iterate(stream, "first");
                writer.insertOne(new Document("n", 2));
                iterate(stream, "second");
            }
        }
    }

    private static void iterate(MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream, String which) {
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                ChangeStreamDocument<Document> change = stream.tryNext();
                if (change != null) {
                    System.out.println(which + " iteration: " + change);
                    return;
                }
            } catch (RuntimeException error) {
                System.out.println(which + " iteration raised " + error + "; server cursor still "
                        + stream.getServerCursor());
                return;
            }
        }
        System.out.println(which + " iteration: nothing");
    }
}
