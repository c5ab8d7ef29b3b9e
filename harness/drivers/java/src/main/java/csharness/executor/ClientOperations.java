package csharness.executor;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoCluster;
import org.bson.BsonDocument;

/** The operations on a client entity: listing databases, and closing it. */
final class ClientOperations {
    private ClientOperations() {}

    static void register() {
        Operations.add("listDatabases", ClientEntity.class, ClientOperations::listDatabases);
        Operations.add("listDatabaseNames", ClientEntity.class, ClientOperations::listDatabaseNames);
        Operations.add("close", ClientEntity.class, ClientOperations::close);
    }

    private static Outcome listDatabases(Call call) {
        MongoCluster cluster = call.cluster();
        ClientSession session = call.session();
        var databases = session == null
                ? cluster.listDatabases(BsonDocument.class)
                : cluster.listDatabases(session, BsonDocument.class);
        CommonOptions.document(call.args, "filter", databases::filter);
        CommonOptions.bool(call.args, "nameOnly", databases::nameOnly);
        CommonOptions.bool(call.args, "authorizedDatabases", databases::authorizedDatabasesOnly);
        CommonOptions.comment(call.args, databases::comment);
        call.args.done();
        return Results.documents(databases);
    }

    private static Outcome listDatabaseNames(Call call) {
        MongoCluster cluster = call.cluster();
        ClientSession session = call.session();
        call.args.done();
        var names = session == null ? cluster.listDatabaseNames() : cluster.listDatabaseNames(session);
        return Outcome.value(Results.strings(names));
    }

    private static Outcome close(Call call) {
        ClientEntity client = call.expect(ClientEntity.class, "client");
        call.args.done();
        client.client.close();
        return Outcome.NONE;
    }
}
