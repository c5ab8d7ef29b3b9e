import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import com.mongodb.event.CommandSucceededEvent;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * specs/expectations/drivers/java.yml: prose test 9 of the README at 51ca03b. The change-streams spec: a stream
 * started without a start point whose initial aggregate returned no result and no postBatchResumeToken MUST save
 * the aggregate's operationTime and resume with startAtOperationTime = that time. The Java driver resumes with an
 * empty $changeStream and loses the changes written before the resume: CommandCursorResult reads operationTime
 * from the reply's cursor document, where the server never puts it (it is a top-level field), so nothing is saved.
 *
 * A current server always sends postBatchResumeToken; run this through the wire proxy that removes it, as a
 * server before 4.0.7 replied:
 *   python tests/repro/java/shaping_proxy.py pre-4.0.7-cursor-replies 127.0.0.1:27999   (prints URI)
 *   java -cp <driver jars>:. OperationTimeNotSaved <that URI> mongodb://127.0.0.1:27999/
 * (the second URI, the server itself, arms the fail point and writes the changes.)
 */
public class OperationTimeNotSaved {
    public static void main(String[] args) throws Exception {
        CommandListener printer = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommandName().equals("aggregate")) {
                    System.out.println("aggregate $changeStream: "
                            + event.getCommand().getArray("pipeline").get(0).asDocument().get("$changeStream"));
                }
            }

            @Override
            public void commandSucceeded(CommandSucceededEvent event) {
                if (event.getCommandName().equals("aggregate")) {
                    System.out.println("  reply operationTime " + event.getResponse().get("operationTime")
                            + ", postBatchResumeToken " + event.getResponse().getDocument("cursor").get("postBatchResumeToken"));
                }
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(args[0])).addCommandListener(printer).build();
        try (MongoClient client = MongoClients.create(settings); MongoClient direct = MongoClients.create(args[1])) {
            MongoCollection<Document> writer = direct.getDatabase("repro").getCollection("operation_time");
            writer.drop();
            MongoCollection<Document> collection = client.getDatabase("repro").getCollection("operation_time");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                    collection.watch().maxAwaitTime(50, TimeUnit.MILLISECONDS).cursor()) {
                System.out.println("first tryNext: " + stream.tryNext());
                writer.insertOne(new Document("n", 1));
                direct.getDatabase("admin").runCommand(Document.parse(
                        "{configureFailPoint: 'failCommand', mode: {times: 1},"
                                + " data: {failCommands: ['getMore'], errorCode: 43}}"));
                writer.insertOne(new Document("n", 2));
                long deadline = System.currentTimeMillis() + 3000;
                int seen = 0;
                while (System.currentTimeMillis() < deadline) {
                    ChangeStreamDocument<Document> change = stream.tryNext();
                    if (change != null) {
                        System.out.println("change: " + change.getFullDocument());
                        seen++;
                    }
                }
                System.out.println(seen + " of the 2 changes written around the resume arrived");
            } finally {
                direct.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            }
        }
    }
}
