package csharness.executor;

/**
 * An error the executor itself answers (docs/executor-protocol.md, section 7), as opposed to the driver's own
 * errors: the kind tells the harness whether to skip the test (notImplemented), call it a harness or executor
 * defect (invalidRequest, internal) or a failed wait for a change (noChange).
 */
final class ExecutorError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    final String kind;

    private ExecutorError(String kind, String message) {
        super(message);
        this.kind = kind;
    }

    static ExecutorError notImplemented(String message) {
        return new ExecutorError("notImplemented", message);
    }

    static ExecutorError invalidRequest(String message) {
        return new ExecutorError("invalidRequest", message);
    }

    static ExecutorError noChange(String message) {
        return new ExecutorError("noChange", message);
    }

    static ExecutorError internal(String message) {
        return new ExecutorError("internal", message);
    }
}
