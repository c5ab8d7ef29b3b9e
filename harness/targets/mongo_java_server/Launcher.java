// Starts mongo-java-server (memory backend) for the conformance harness: the harness compiles this file
// against the pinned jars, runs it, and reads one ready line from stdout. Arguments:
//   <version>            the server version to report: "library" (the library's own default), a library
//                        ServerVersion (3.6, 4.0, 5.0) or any X.Y (then <wire version> is required)
//   [<wire version>]     the maxWireVersion to report with an X.Y the library does not enumerate
// The server binds 127.0.0.1 on a free port, keeps an oplog (change streams need it) and stops when stdin
// closes (the harness died or stopped it), so it never outlives its parent.
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.ServerVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

public final class Launcher {
    /** A reported version the library does not enumerate: the operator's X.Y at the operator's wire version. */
    record ClaimedVersion(List<Integer> versionArray, int wireVersion) implements MongoVersion {
        @Override public List<Integer> getVersionArray() { return versionArray; }
        @Override public int getWireVersion() { return wireVersion; }
    }

    public static void main(String[] args) throws Exception {
        String requested = args.length > 0 ? args[0] : "library";
        MemoryBackend backend = new MemoryBackend();
        if (!requested.equals("library")) {
            backend.version(version(requested, args.length > 1 ? args[1] : null));
        }
        MongoServer server = new MongoServer(backend);
        server.enableOplog();
        server.bind("127.0.0.1", 0);
        InetSocketAddress address = server.getLocalAddress();
        System.out.println("mongo-java-server ready port=" + address.getPort());
        System.out.flush();
        while (System.in.read() != -1) {
            // stdin is the harness's end of a pipe: end of file means stop
        }
        server.shutdownNow();
    }

    static MongoVersion version(String requested, String wire) {
        if (wire == null) {
            return ServerVersion.valueOf("MONGO_" + requested.replace('.', '_'));
        }
        List<Integer> parts = new ArrayList<>();
        for (String part : requested.split("\\.")) {
            parts.add(Integer.valueOf(part));
        }
        while (parts.size() < 3) {
            parts.add(0);
        }
        return new ClaimedVersion(List.copyOf(parts), Integer.parseInt(wire));
    }
}
