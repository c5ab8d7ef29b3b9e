package csharness.executor;

/** One unified-format operation on one entity type: runs the driver call and gives what it produced. */
@FunctionalInterface
interface Operation {
    Outcome run(Call call);
}
