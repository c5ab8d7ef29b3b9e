package csharness.executor;

import com.mongodb.ConnectionString;
import java.lang.reflect.Field;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A client's connection string (section 6.1): the scope's URI with the entity's uriOptions merged in (an
 * option in uriOptions wins), and only its first host when useMultipleMongoses is false. The Java driver's
 * ConnectionString logs and drops an option it does not know, which would silently change what a test
 * observes, so an option its parser does not list is refused with notImplemented instead.
 */
final class UriOptions {
    private static final Set<String> DRIVER_KEYS = driverKeys();

    private UriOptions() {}

    static String merge(String uri, BsonDocument uriOptions, boolean firstHostOnly) {
        int schemeEnd = uri.indexOf("://");
        if (schemeEnd < 0) {
            throw ExecutorError.invalidRequest("openScope's uri is not a connection string: " + uri);
        }
        String scheme = uri.substring(0, schemeEnd + 3);
        String rest = uri.substring(schemeEnd + 3);
        int query = rest.indexOf('?');
        String base = query < 0 ? rest : rest.substring(0, query);
        String options = query < 0 ? "" : rest.substring(query + 1);
        if (firstHostOnly) {
            base = firstHost(base);
        }
        if (!base.contains("/")) {
            base = base + "/";
        }
        Set<String> overridden = new HashSet<>();
        for (String key : uriOptions.keySet()) {
            overridden.add(key.toLowerCase(Locale.ROOT));
        }
        List<String> pairs = new ArrayList<>();
        for (String pair : options.split("&")) {
            String key = pair.contains("=") ? pair.substring(0, pair.indexOf('=')) : pair;
            if (!pair.isEmpty() && !overridden.contains(key.toLowerCase(Locale.ROOT))) {
                pairs.add(pair);
            }
        }
        for (Map.Entry<String, BsonValue> option : uriOptions.entrySet()) {
            pairs.add(option.getKey() + "=" + encode(option.getKey(), option.getValue()));
        }
        return scheme + base + (pairs.isEmpty() ? "" : "?" + String.join("&", pairs));
    }

    private static String firstHost(String base) {
        int slash = base.indexOf('/');
        String hosts = slash < 0 ? base : base.substring(0, slash);
        String path = slash < 0 ? "" : base.substring(slash);
        int at = hosts.lastIndexOf('@');
        String credentials = at < 0 ? "" : hosts.substring(0, at + 1);
        String first = hosts.substring(at + 1).split(",")[0];
        return credentials + first + path;
    }

    private static String encode(String key, BsonValue value) {
        if (DRIVER_KEYS != null && !DRIVER_KEYS.contains(key.toLowerCase(Locale.ROOT))) {
            throw ExecutorError.notImplemented("URI option '" + key + "' is not one the Java driver's connection string takes");
        }
        String text;
        if (value.isString()) {
            text = value.asString().getValue();
        } else if (value.isBoolean()) {
            text = Boolean.toString(value.asBoolean().getValue());
        } else if (value.isNumber()) {
            text = Long.toString(Values.optionNumber("URI option '" + key + "'", value));
        } else {
            throw ExecutorError.notImplemented("URI option '" + key + "' with a value of type " + value.getBsonType());
        }
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    /**
     * The option names the driver's ConnectionString parses (its private ALL_KEYS), or null when this
     * release keeps them elsewhere: then every option is handed over and the driver decides.
     */
    @SuppressWarnings("unchecked")
    private static Set<String> driverKeys() {
        try {
            Field field = ConnectionString.class.getDeclaredField("ALL_KEYS");
            field.setAccessible(true);
            Set<String> keys = new HashSet<>();
            for (String key : (Set<String>) field.get(null)) {
                keys.add(key.toLowerCase(Locale.ROOT));
            }
            return keys;
        } catch (ReflectiveOperationException | RuntimeException notThere) {
            System.err.println("java executor: cannot read the driver's URI option names: " + notThere);
            return null;
        }
    }
}
