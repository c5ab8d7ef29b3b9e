package csharness.executor;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoServerException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoSocketWriteTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.MongoWriteConcernException;
import com.mongodb.MongoWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.WriteConcernError;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A driver exception as section 7's driverError: its class, the server's code, code name and reply when
 * the server refused, its labels, and whether it is a client-side, network or timeout error.
 */
final class DriverErrors {
    private DriverErrors() {}

    static BsonDocument describe(Throwable error) {
        BsonDocument document = new BsonDocument("kind", new BsonString("driverError"));
        document.put("message", new BsonString(String.valueOf(error.getMessage())));
        document.put("type", new BsonString(error.getClass().getSimpleName()));
        ServerCode code = serverCode(error);
        document.put("code", code == null ? BsonNull.VALUE : new BsonInt32(code.code));
        document.put("codeName", code == null || code.name == null ? BsonNull.VALUE : new BsonString(code.name));
        document.put("errorLabels", labels(error));
        document.put("isClientError", BsonBoolean.valueOf(!fromServer(error)));
        document.put("isNetworkError", BsonBoolean.valueOf(error instanceof MongoSocketException));
        document.put("isTimeoutError", BsonBoolean.valueOf(isTimeout(error, code)));
        BsonDocument response = response(error);
        if (response != null) {
            document.put("errorResponse", response);
        }
        if (error instanceof MongoBulkWriteException bulk) {
            document.put("result", Results.bulkWrite(bulk.getWriteResult()));
        }
        return document;
    }

    /** Whether the server refused the operation (a reply with ok: 0, a write error, a write concern error). */
    static boolean fromServer(Throwable error) {
        return error instanceof MongoServerException || error instanceof MongoExecutionTimeoutException;
    }

    private record ServerCode(int code, String name) {}

    private static ServerCode serverCode(Throwable error) {
        if (error instanceof MongoCommandException command) {
            return new ServerCode(command.getErrorCode(), blankToNull(command.getErrorCodeName()));
        }
        if (error instanceof MongoWriteException write) {
            return new ServerCode(write.getError().getCode(), blankToNull(write.getErrorCodeName()));
        }
        if (error instanceof MongoWriteConcernException concern) {
            WriteConcernError wce = concern.getWriteConcernError();
            return new ServerCode(wce.getCode(), blankToNull(wce.getCodeName()));
        }
        if (error instanceof MongoBulkWriteException bulk) {
            if (!bulk.getWriteErrors().isEmpty()) {
                return new ServerCode(bulk.getWriteErrors().get(0).getCode(), null);
            }
            WriteConcernError wce = bulk.getWriteConcernError();
            return wce == null ? null : new ServerCode(wce.getCode(), blankToNull(wce.getCodeName()));
        }
        if (error instanceof MongoServerException server) {
            return new ServerCode(server.getCode(), blankToNull(server.getErrorCodeName()));
        }
        if (error instanceof MongoExecutionTimeoutException timeout) {
            return new ServerCode(timeout.getCode(), null);
        }
        return null;
    }

    private static String blankToNull(String name) {
        return name == null || name.isEmpty() ? null : name;
    }

    private static BsonArray labels(Throwable error) {
        List<BsonValue> labels = new ArrayList<>();
        if (error instanceof MongoException mongo) {
            for (String label : mongo.getErrorLabels()) {
                labels.add(new BsonString(label));
            }
        }
        return new BsonArray(labels);
    }

    private static boolean isTimeout(Throwable error, ServerCode code) {
        if (error instanceof MongoTimeoutException
                || error instanceof MongoSocketReadTimeoutException
                || error instanceof MongoSocketWriteTimeoutException
                || error instanceof MongoExecutionTimeoutException) {
            return true;
        }
        if (error instanceof MongoSocketException && error.getCause() instanceof SocketTimeoutException) {
            return true;
        }
        return code != null && code.code == 50 && !(error instanceof MongoWriteConcernException);
    }

    private static BsonDocument response(Throwable error) {
        if (error instanceof MongoCommandException command && command.getResponse() != null) {
            return Values.copy(command.getResponse());
        }
        if (error instanceof MongoBulkWriteException bulk) {
            BsonDocument response = new BsonDocument();
            BsonArray writeErrors = new BsonArray();
            for (BulkWriteError writeError : bulk.getWriteErrors()) {
                BsonDocument entry = new BsonDocument("index", new BsonInt32(writeError.getIndex()));
                entry.put("code", new BsonInt32(writeError.getCode()));
                entry.put("errmsg", new BsonString(writeError.getMessage()));
                if (!writeError.getDetails().isEmpty()) {
                    entry.put("errInfo", writeError.getDetails());
                }
                writeErrors.add(entry);
            }
            if (!writeErrors.isEmpty()) {
                response.put("writeErrors", writeErrors);
            }
            if (bulk.getWriteConcernError() != null) {
                response.put("writeConcernError", writeConcernError(bulk.getWriteConcernError()));
            }
            return response;
        }
        if (error instanceof MongoWriteConcernException concern) {
            return new BsonDocument("writeConcernError", writeConcernError(concern.getWriteConcernError()));
        }
        return null;
    }

    private static BsonDocument writeConcernError(WriteConcernError error) {
        BsonDocument document = new BsonDocument("code", new BsonInt32(error.getCode()));
        if (!error.getCodeName().isEmpty()) {
            document.put("codeName", new BsonString(error.getCodeName()));
        }
        document.put("errmsg", new BsonString(error.getMessage()));
        if (!error.getDetails().isEmpty()) {
            document.put("errInfo", error.getDetails());
        }
        return document;
    }
}
