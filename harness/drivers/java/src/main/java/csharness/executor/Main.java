package csharness.executor;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The executor's process (docs/executor-protocol.md, section 1): requests on stdin, one JSON line each;
 * replies on stdout, in order, one per request with an integer id; everything else on stderr. The JVM's
 * own System.out is pointed at stderr first, so no library can write to the protocol's stream. EOF on
 * stdin closes every scope and exits 0. With HARNESS_JAVA_EXECUTOR_TRACE set to a file name, every line
 * read and written is appended to that file (for debugging a disagreement with the harness).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws IOException {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (Vocabulary.EVENT_FAMILIES.isEmpty()) { // read now: a missing vocabulary stops the executor at start-up
            throw new IllegalStateException("the vocabulary names no events");
        }
        Executor executor = new Executor();
        PrintStream trace = trace(System.getenv("HARNESS_JAVA_EXECUTOR_TRACE"));
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = input.readLine()) != null) {
            if (trace != null) {
                trace.println("> " + line);
            }
            Request request = Wire.parse(line);
            if (request == null) {
                System.err.println("java executor: ignored a line that is not a request: " + abbreviate(line));
                continue;
            }
            Reply reply = executor.handle(request);
            String answer = Wire.encode(request.id(), reply, "hello".equals(request.method()) && reply.ok());
            protocol.print(answer);
            protocol.print('\n');
            protocol.flush();
            if (trace != null) {
                trace.println("< " + answer);
                trace.flush();
            }
        }
        executor.closeAll();
        protocol.flush();
        System.exit(0);
    }

    private static PrintStream trace(String file) throws IOException {
        if (file == null || file.isEmpty()) {
            return null;
        }
        return new PrintStream(new FileOutputStream(file, true), true, StandardCharsets.UTF_8);
    }

    private static String abbreviate(String line) {
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }
}
