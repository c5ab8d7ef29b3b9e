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
import org.bson.BsonDocument;
import org.bson.Document;

/**
 * specs/expectations/drivers/java.yml: prose test 17. The change-streams spec's Resume Process: a stream started
 * with startAfter that has returned no result MUST resume with startAfter set to the cached token, and MUST NOT
 * set resumeAfter. The Java driver always resumes with resumeAfter (ChangeStreamOperation's
 * setChangeStreamOptionsForResume clears startAfter whatever the stream has returned).
 *
 * Run against a server with test commands (failCommand):
 *   java -cp <driver jars>:. ResumeKeepsStartAfter mongodb://127.0.0.1:27999/
 */
public class ResumeKeepsStartAfter {
    public static void main(String[] args) throws Exception {
        CommandListener printer = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (event.getCommandName().equals("aggregate")) {
                    System.out.println("aggregate $changeStream: "
                            + event.getCommand().getArray("pipeline").get(0).asDocument().get("$changeStream"));
                }
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(args[0])).addCommandListener(printer).build();
        try (MongoClient client = MongoClients.create(settings)) {
            MongoCollection<Document> collection = client.getDatabase("repro").getCollection("start_after");
            collection.drop();
            BsonDocument token;
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> first = collection.watch().cursor()) {
                collection.insertOne(new Document("n", 1));
                token = first.next().getResumeToken();
            }
            System.out.println("startAfter token: " + token.toJson());
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                    collection.watch().startAfter(token).maxAwaitTime(200, TimeUnit.MILLISECONDS).cursor()) {
                client.getDatabase("admin").runCommand(Document.parse(
                        "{configureFailPoint: 'failCommand', mode: {times: 1},"
                                + " data: {failCommands: ['getMore'], errorCode: 43}}"));
                System.out.println("tryNext: " + stream.tryNext() + " (the getMore failed with CursorNotFound; the"
                        + " second aggregate above is the resume: the spec wants startAfter there)");
            } finally {
                client.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            }
        }
    }
}
