package csharness.executor;

import com.mongodb.TransactionOptions;
import com.mongodb.client.ClientSession;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The operations on a session entity: transactions (started, committed, aborted, or run by the driver's
 * withTransaction with the nested operations as its callback, section 6.5) and endSession.
 */
final class SessionOperations {
    private static final String[] TRANSACTION_OPTIONS = {
        "readConcern", "writeConcern", "readPreference", "maxCommitTimeMS", "timeoutMS"
    };

    private SessionOperations() {}

    static void register() {
        Operations.add("startTransaction", Scope.SessionEntity.class, SessionOperations::startTransaction);
        Operations.add("commitTransaction", Scope.SessionEntity.class, call -> {
            session(call).commitTransaction();
            return Outcome.NONE;
        });
        Operations.add("abortTransaction", Scope.SessionEntity.class, call -> {
            session(call).abortTransaction();
            return Outcome.NONE;
        });
        Operations.add("endSession", Scope.SessionEntity.class, call -> {
            session(call).close();
            return Outcome.NONE;
        });
        Operations.add("withTransaction", Scope.SessionEntity.class, SessionOperations::withTransaction);
    }

    private static ClientSession session(Call call) {
        ClientSession session = call.expect(Scope.SessionEntity.class, "session").session();
        call.args.done();
        return session;
    }

    private static TransactionOptions transactionOptions(Arguments args) {
        BsonDocument options = new BsonDocument();
        for (String name : TRANSACTION_OPTIONS) {
            BsonValue value = args.value(name);
            if (value != null) {
                options.put(name, value);
            }
        }
        return options.isEmpty() ? null : Options.transactionOptions(options);
    }

    private static Outcome startTransaction(Call call) {
        ClientSession session = call.expect(Scope.SessionEntity.class, "session").session();
        TransactionOptions options = transactionOptions(call.args);
        call.args.done();
        if (options == null) {
            session.startTransaction();
        } else {
            session.startTransaction(options);
        }
        return Outcome.NONE;
    }

    /**
     * The driver's withTransaction, whose callback runs the nested operations in order as run would; a
     * nested operation's error leaves the callback unchanged, so the driver's loop decides. Every nested
     * operation run, over all attempts, is reported in the reply's nested list (even when the whole
     * withTransaction fails).
     */
    private static Outcome withTransaction(Call call) {
        ClientSession session = call.expect(Scope.SessionEntity.class, "session").session();
        List<BsonDocument> callback = call.args.documents("callback");
        TransactionOptions options = transactionOptions(call.args);
        call.args.done();
        NestedRun nested = new NestedRun(call.scope, callback);
        try {
            if (options == null) {
                session.withTransaction(nested::attempt);
            } else {
                session.withTransaction(nested::attempt, options);
            }
        } catch (RuntimeException failure) {
            throw new WithNested(failure, nested.report());
        }
        return Outcome.NONE.withNested(nested.report());
    }

    /** The callback: one attempt runs every nested operation in order and records each one's outcome. */
    private static final class NestedRun {
        private final Scope scope;
        private final List<BsonDocument> operations;
        private final Runner runner = new Runner();
        private final List<BsonValue> entries = new ArrayList<>();
        private int attempts;

        NestedRun(Scope scope, List<BsonDocument> operations) {
            this.scope = scope;
            this.operations = operations;
        }

        Object attempt() {
            attempts++;
            for (int index = 0; index < operations.size(); index++) {
                BsonDocument entry = new BsonDocument("attempt", new BsonInt32(attempts));
                entry.put("index", new BsonInt32(index));
                try {
                    Reply reply = runner.run(scope, operations.get(index));
                    entry.put("ok", BsonBoolean.TRUE);
                    entry.put("result", reply.result());
                    if (reply.entity() != null) {
                        entry.put("resultKind", new BsonString(reply.resultKind()));
                        entry.put("entity", new BsonString(reply.entity()));
                    }
                    entries.add(entry);
                } catch (ExecutorError refused) {
                    entry.put("ok", BsonBoolean.FALSE);
                    entry.put("error", Executor.errorDocument(refused));
                    entries.add(entry);
                    throw refused;
                } catch (RuntimeException driverError) {
                    entry.put("ok", BsonBoolean.FALSE);
                    entry.put("error", DriverErrors.describe(driverError));
                    entries.add(entry);
                    throw driverError;
                }
            }
            return null;
        }

        BsonArray report() {
            return new BsonArray(new ArrayList<>(entries));
        }
    }

    /** A withTransaction that failed, with the nested operations it ran before it did. */
    static final class WithNested extends RuntimeException {
        private static final long serialVersionUID = 1L;

        final transient RuntimeException failure;
        final transient BsonArray nested;

        WithNested(RuntimeException failure, BsonArray nested) {
            super(failure);
            this.failure = failure;
            this.nested = nested;
        }
    }
}
