import com.mongodb.MongoClientSettings;
import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.changestream.FullDocument;
import com.mongodb.client.model.changestream.FullDocumentBeforeChange;
import com.mongodb.event.CommandListener;
import com.mongodb.event.CommandStartedEvent;
import org.bson.Document;

/**
 * specs/expectations/drivers/java.yml: CS-OPT-FULLDOC-UNKNOWN and CS-OPT-FULLDOCBC-UNKNOWN. The change-streams
 * spec says a driver MUST NOT raise an error for an unknown fullDocument / fullDocumentBeforeChange value (the
 * server validates it). The Java driver takes these options as enums only, and their fromString refuses any
 * value it does not know before anything is sent: there is no API to pass the string on.
 *
 * Run: java -cp <driver jars>:. FullDocumentUnknown mongodb://127.0.0.1:27999/
 */
public class FullDocumentUnknown {
    public static void main(String[] args) {
        CommandListener printer = new CommandListener() {
            @Override
            public void commandStarted(CommandStartedEvent event) {
                System.out.println("sent " + event.getCommandName());
            }
        };
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(args[0])).addCommandListener(printer).build();
        try (MongoClient client = MongoClients.create(settings)) {
            MongoCollection<Document> collection = client.getDatabase("repro").getCollection("fulldoc");
            try {
                collection.watch().fullDocument(FullDocument.fromString("notAModeYet")).cursor().close();
                System.out.println("fullDocument: the aggregate was sent");
            } catch (IllegalArgumentException refused) {
                System.out.println("fullDocument: refused by the driver, nothing sent: " + refused);
            }
            try {
                collection.watch().fullDocumentBeforeChange(FullDocumentBeforeChange.fromString("notAModeYet"))
                        .cursor().close();
                System.out.println("fullDocumentBeforeChange: the aggregate was sent");
            } catch (IllegalArgumentException refused) {
                System.out.println("fullDocumentBeforeChange: refused by the driver, nothing sent: " + refused);
            }
        }
    }
}
