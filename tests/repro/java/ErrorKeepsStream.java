import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * specs/expectations/drivers/java.yml: CS-TOKEN-MISSING (server side) and CS-RESUME-NONRESUMABLE. After an
 * iteration raises a non-resumable error (the server's refusal of a change whose _id a $project removed; a getMore
 * failing with code 89 and no label), the Java driver keeps the change stream open: the next tryNext sends another
 * getMore on the same cursor (and, when the server has closed that cursor, resumes with an aggregate). The
 * change-streams spec closes the stream on a missing resume token; the scenarios read a non-resumable error as the
 * end of the stream too (no getMore, no resume afterwards).
 *
 *   java -cp <driver jars>:. ErrorKeepsStream mongodb://127.0.0.1:27999/
 */
public class ErrorKeepsStream {
    public static void main(String[] args) throws Exception {
        CommandListener printer = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                if (!event.getCommandName().equals("killCursors") && !event.getCommandName().equals("endSessions")) {
                    System.out.println("  sent " + event.getCommandName());
                }
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(args[0])).addCommandListener(printer).build();
        try (MongoClient client = MongoClients.create(settings); MongoClient direct = MongoClients.create(args[0])) {
            MongoCollection<Document> writer = direct.getDatabase("repro").getCollection("error_keeps_stream");
            writer.drop();
            MongoCollection<Document> collection = client.getDatabase("repro").getCollection("error_keeps_stream");

            System.out.println("a pipeline that removes _id (the server refuses the change):");
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream = collection
                    .watch(List.of(Document.parse("{$project: {_id: 0}}")))
                    .maxAwaitTime(200, TimeUnit.MILLISECONDS).cursor()) {
                writer.insertOne(new Document("n", 1));
                iterate(stream, "first");
                iterate(stream, "then");
            }

            System.out.println("a getMore failing with code 89 and no label:");
            direct.getDatabase("admin").runCommand(Document.parse(
                    "{configureFailPoint: 'failCommand', mode: {times: 1}, data: {failCommands: ['getMore'], errorCode: 89}}"));
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                    collection.watch().maxAwaitTime(200, TimeUnit.MILLISECONDS).cursor()) {
                writer.insertOne(new Document("n", 2));
                iterate(stream, "first");
                iterate(stream, "then");
            } finally {
                direct.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: 'off'}"));
            }
        }
    }

    private static void iterate(MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream, String which) {
        try {
            System.out.println(which + " tryNext: " + stream.tryNext());
        } catch (RuntimeException error) {
            System.out.println(which + " tryNext raised " + error.getClass().getSimpleName() + " " + error.getMessage());
        }
    }
}
