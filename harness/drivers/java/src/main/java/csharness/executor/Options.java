package csharness.executor;

import com.mongodb.ClientSessionOptions;
import com.mongodb.ReadConcern;
import com.mongodb.ReadConcernLevel;
import com.mongodb.ReadPreference;
import com.mongodb.TagSet;
import com.mongodb.Tag;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationAlternate;
import com.mongodb.client.model.CollationCaseFirst;
import com.mongodb.client.model.CollationMaxVariable;
import com.mongodb.client.model.CollationStrength;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The unified format's options documents as the driver's option objects: readConcern, writeConcern,
 * readPreference, transaction options and session options. A key with no mapping is refused with
 * notImplemented; a value the driver rejects is the driver's error.
 */
final class Options {
    private Options() {}

    static ReadConcern readConcern(BsonDocument spec) {
        ReadConcern concern = ReadConcern.DEFAULT;
        for (String key : spec.keySet()) {
            if (!key.equals("level")) {
                throw ExecutorError.notImplemented("readConcern option '" + key + "' is not implemented");
            }
            concern = new ReadConcern(ReadConcernLevel.fromString(spec.getString(key).getValue()));
        }
        return concern;
    }

    static WriteConcern writeConcern(BsonDocument spec) {
        WriteConcern concern = WriteConcern.ACKNOWLEDGED;
        for (String key : spec.keySet()) {
            BsonValue value = spec.get(key);
            concern = switch (key) {
                case "w" -> value.isString()
                        ? concern.withW(value.asString().getValue())
                        : concern.withW((int) Values.optionNumber("writeConcern.w", value));
                case "journal", "j" -> concern.withJournal(value.asBoolean().getValue());
                case "wtimeoutMS", "wtimeout" -> concern.withWTimeout(
                        Values.optionNumber("writeConcern." + key, value), TimeUnit.MILLISECONDS);
                default -> throw ExecutorError.notImplemented("writeConcern option '" + key + "' is not implemented");
            };
        }
        return concern;
    }

    static ReadPreference readPreference(BsonDocument spec) {
        String mode = null;
        List<TagSet> tagSets = new ArrayList<>();
        Long maxStaleness = null;
        for (String key : spec.keySet()) {
            switch (key) {
                case "mode" -> mode = spec.getString(key).getValue();
                case "tagSets" -> {
                    for (BsonValue set : spec.getArray(key)) {
                        List<Tag> tags = new ArrayList<>();
                        for (var tag : set.asDocument().entrySet()) {
                            tags.add(new Tag(tag.getKey(), tag.getValue().asString().getValue()));
                        }
                        tagSets.add(new TagSet(tags));
                    }
                }
                case "maxStalenessSeconds" -> maxStaleness = Values.optionNumber("maxStalenessSeconds", spec.get(key));
                default -> throw ExecutorError.notImplemented("readPreference option '" + key + "' is not implemented");
            }
        }
        if (mode == null) {
            throw ExecutorError.invalidRequest("readPreference without a mode: " + spec.toJson());
        }
        if (maxStaleness != null) {
            return ReadPreference.valueOf(mode, tagSets, maxStaleness, TimeUnit.SECONDS);
        }
        return tagSets.isEmpty() ? ReadPreference.valueOf(mode) : ReadPreference.valueOf(mode, tagSets);
    }

    /** A collation document as the driver's Collation (its enums parse the string values themselves). */
    static Collation collation(BsonDocument spec) {
        Collation.Builder builder = Collation.builder();
        for (String key : spec.keySet()) {
            BsonValue value = spec.get(key);
            switch (key) {
                case "locale" -> builder.locale(value.asString().getValue());
                case "caseLevel" -> builder.caseLevel(value.asBoolean().getValue());
                case "caseFirst" -> builder.collationCaseFirst(CollationCaseFirst.fromString(value.asString().getValue()));
                case "strength" -> builder.collationStrength(
                        CollationStrength.fromInt((int) Values.optionNumber("collation.strength", value)));
                case "numericOrdering" -> builder.numericOrdering(value.asBoolean().getValue());
                case "alternate" -> builder.collationAlternate(CollationAlternate.fromString(value.asString().getValue()));
                case "maxVariable" -> builder.collationMaxVariable(
                        CollationMaxVariable.fromString(value.asString().getValue()));
                case "normalization" -> builder.normalization(value.asBoolean().getValue());
                case "backwards" -> builder.backwards(value.asBoolean().getValue());
                default -> throw ExecutorError.notImplemented("collation option '" + key + "' is not implemented");
            }
        }
        return builder.build();
    }

    /** A transaction's options (startTransaction, withTransaction, a session's defaultTransactionOptions). */
    static TransactionOptions transactionOptions(BsonDocument spec) {
        TransactionOptions.Builder builder = TransactionOptions.builder();
        for (String key : spec.keySet()) {
            BsonValue value = spec.get(key);
            switch (key) {
                case "readConcern" -> builder.readConcern(readConcern(value.asDocument()));
                case "writeConcern" -> builder.writeConcern(writeConcern(value.asDocument()));
                case "readPreference" -> builder.readPreference(readPreference(value.asDocument()));
                case "maxCommitTimeMS" -> builder.maxCommitTime(
                        Values.optionNumber("maxCommitTimeMS", value), TimeUnit.MILLISECONDS);
                case "timeoutMS" -> builder.timeout(Values.optionNumber("timeoutMS", value), TimeUnit.MILLISECONDS);
                default -> throw ExecutorError.notImplemented("transaction option '" + key + "' is not implemented");
            }
        }
        return builder.build();
    }

    static ClientSessionOptions sessionOptions(BsonDocument spec) {
        ClientSessionOptions.Builder builder = ClientSessionOptions.builder();
        for (String key : spec.keySet()) {
            BsonValue value = spec.get(key);
            switch (key) {
                case "causalConsistency" -> builder.causallyConsistent(value.asBoolean().getValue());
                case "snapshot" -> builder.snapshot(value.asBoolean().getValue());
                case "defaultTransactionOptions" -> builder.defaultTransactionOptions(
                        transactionOptions(value.asDocument()));
                case "defaultTimeoutMS" -> builder.defaultTimeout(
                        Values.optionNumber("defaultTimeoutMS", value), TimeUnit.MILLISECONDS);
                default -> throw ExecutorError.notImplemented("session option '" + key + "' is not implemented");
            }
        }
        return builder.build();
    }
}
