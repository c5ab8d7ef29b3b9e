"""Blame: for each test failing in a cell, whether its target, its driver or the pair is the cause.

A cell is a pair: the *driver* (name and version, the part of the cell's name
before `` / ``) and the *target* (everything after it: target name and
version, topology, fail points, network faults). Topology, fail points and
network faults belong to the target because they describe what the driver
talks to: the same server presented as a replica set, or with fail points
emulated by the wire proxy, answers differently whatever the driver.

Each cell x test has a status (:mod:`reports.outcomes`): a test *fails* in a
cell when its status is ``fail`` or ``flaky`` (it failed at least once there),
*passes* when it is ``pass``; a cell where it was only skipped is no evidence
either way and is left out. For a test failing with driver D on target T:

- ``target``: every driver that ran it on T fails there (at least two drivers),
  and each of them passes it on some other target;
- ``driver``: D fails it on every target it ran on (at least two targets), the
  same way (one message pattern, :func:`reports.normalise.message_pattern`, for
  all its failures), and on each of them some other driver passes it;
- ``pair``: another driver passes it on T, and D passes it on another target;
- ``everywhere``: it fails in every cell that ran it, and those span at least
  two drivers and two targets (a test or a rule no one meets);
- ``undecided``: none of these; the reason says what is missing ("no other
  driver ran it on this target", "..., but it passes on no other target with
  node 6.21.0") instead of a guess.

The rules are symmetric and exclusive: a target is blamed only when drivers
that can pass the test fail on it, a driver only when targets that can pass the
test fail with it. Only the driver rule compares messages: one driver words the
same fault the same way on every target, so a different message on one target
(pymongo refusing a reply without ``operationTime`` there, a wrong event
elsewhere) is a different failure, not the driver's one fault; different drivers
word even one fault differently, so the target rule cannot ask the same.

Every row carries its evidence (the status of the test in every other cell that
decided it) and its failure messages. Everything is computed with window
functions over the cell x test statuses, on the executors.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from reports.conformance import CELL_AXES
from reports.frames import sorted_table
from reports.outcomes import is_failure, latest_failure_message, status
from reports.versions import with_version_rank

#: The causes, in the order the tables list them.
CAUSES = ("target", "driver", "pair", "everywhere", "undecided")
#: A cell's name is ``DRIVER / TARGET`` (:func:`reports.normalise.cell_name`).
DRIVER_AND_TARGET = r"^(.*?) / (.*)$"
#: Most distinct failure messages kept per row (the latest is always in ``message``).
MESSAGES = 5
#: Most evidence sentences kept per row (the nearest first; ``other_cells`` says how many there were).
EVIDENCE = 24
FAILING_STATUSES = ("fail", "flaky")


def driver_of(cell: Column) -> Column:
    """The driver part of a cell's name (``pymongo 4.20.0``)."""
    return F.regexp_extract(cell, DRIVER_AND_TARGET, 1)


def target_of(cell: Column) -> Column:
    """The target part of a cell's name (``mongo-java-server 1.47.0 replicaset native``)."""
    return F.regexp_extract(cell, DRIVER_AND_TARGET, 2)


def cell_statuses(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test: driver, target, status, counts, failure messages and whether failures were expected.

    With ``per_test`` (:func:`reports.conformance.per_cell_test` of the same verdicts) the counts and the latest
    message come from it and only the failing verdicts are read again, for their messages, patterns and
    expectations: sets of text, which Spark gathers by sorting, over a few percent of the verdicts.
    """
    failing = is_failure()
    failure_sets = [
        F.slice(F.array_sort(F.collect_set(F.when(failing, F.col("message")))), 1, MESSAGES).alias("messages"),
        F.collect_set(F.when(failing, F.col("message_pattern"))).alias("patterns"),
        # true: the expected-outcomes file listed every failure (known deviations); null: no file was used
        F.bool_and(F.when(failing, F.col("expected"))).alias("expected"),
        F.array_join(F.array_sort(F.collect_set(F.when(failing, F.col("expectation_kind")))), ", ").alias(
            "expectation_kinds"
        ),
    ]
    if per_test is None:
        grouped = verdicts.groupBy("cell", "test_id").agg(
            F.min("spec_file").alias("spec_file"),
            F.min("test").alias("test"),
            *[F.min(axis).alias(axis) for axis in CELL_AXES],
            F.count_if(F.col("outcome") == "passed").alias("passed"),
            F.count_if(failing).alias("failures"),
            F.count_if(F.col("outcome") == "skipped").alias("skipped"),
            latest_failure_message(),
            *failure_sets,
        )
    else:
        sets = verdicts.where(failing).groupBy("cell", "test_id").agg(*failure_sets)
        none: dict[str, Column] = {  # what the sets are for a cell x test without failures
            "messages": F.array_compact(F.array().cast("array<string>")),  # an array of non-null texts, as collected
            "patterns": F.array_compact(F.array().cast("array<string>")),
            "expected": F.lit(None).cast("boolean"),
            "expectation_kinds": F.lit(""),
        }
        grouped = per_test.join(sets, ["cell", "test_id"], "left").select(
            "cell",
            "test_id",
            "spec_file",
            "test",
            *CELL_AXES,
            "passed",
            (F.col("failed") + F.col("error")).alias("failures"),
            "skipped",
            "message",
            *[F.coalesce(F.col(name), empty).alias(name) for name, empty in none.items()],
        )
    return grouped.select(
        "*",
        driver_of(F.col("cell")).alias("driver"),
        target_of(F.col("cell")).alias("target"),
        status(F.col("passed"), F.col("failures")).alias("status"),
    )


def _count(condition: Column, window: WindowSpec) -> Column:
    return F.sum(condition.cast("int")).over(window)


def _listed(values: Column) -> Column:
    return F.array_join(F.array_sort(values), ", ")


def _evidence(cells: Column) -> Column:
    """The other cells' statuses as sentences (``passes with pymongo 4.20.0 on embedded ...``), at most EVIDENCE.

    The other drivers on this target come first, then this driver on the other targets, then the rest, so a
    large matrix keeps the cells the rules read first and the row stays bounded.
    """

    def keyed(other: Column) -> Column:
        return F.struct(
            (other["target"] != F.col("target")).alias("elsewhere"),
            (other["driver"] != F.col("driver")).alias("other_driver"),
            other["target"].alias("target"),
            other["driver"].alias("driver"),
            other["status"].alias("status"),
        )

    def sentence(other: Column) -> Column:
        verb = F.when(other["status"] == "pass", "passes").when(other["status"] == "fail", "fails")
        return F.concat(verb.otherwise("is flaky"), F.lit(" with "), other["driver"], F.lit(" on "), other["target"])

    others = F.filter(cells, lambda other: other["cell"] != F.col("cell"))
    return F.transform(F.slice(F.array_sort(F.transform(others, keyed)), 1, EVIDENCE), sentence)


def blame(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test that fails or is flaky there: the cause, the reason, the evidence and the messages.

    ``per_test``: :func:`reports.conformance.per_cell_test` of the same verdicts, when the job made it.
    """
    decided = cell_statuses(verdicts, per_test).where(F.col("status") != "skip")
    on_target, with_driver, of_test = (
        Window.partitionBy("test_id", "target"),
        Window.partitionBy("test_id", "driver"),
        Window.partitionBy("test_id"),
    )
    passes = F.col("status") == "pass"
    counted = decided.select(
        "*",
        _count(passes, on_target).alias("passes_on_target"),
        F.count("*").over(on_target).alias("drivers_on_target"),
        _count(passes, with_driver).alias("passes_with_driver"),
        F.count("*").over(with_driver).alias("targets_with_driver"),
    )
    # second pass: what the other drivers on this target do elsewhere, what the other targets of this driver do
    never_elsewhere = F.when(F.col("passes_with_driver") == 0, F.col("driver"))
    nobody_passes = F.when(F.col("passes_on_target") == 0, F.col("target"))
    marked = counted.select(
        "*",
        F.collect_set(never_elsewhere).over(on_target).alias("drivers_passing_nowhere"),
        F.collect_set(nobody_passes).over(with_driver).alias("targets_passing_with_none"),
        F.size(F.array_distinct(F.flatten(F.collect_list("patterns").over(with_driver)))).alias("patterns_with_driver"),
        _count(passes, of_test).alias("passes_of_test"),
        F.size(F.collect_set("driver").over(of_test)).alias("drivers_of_test"),
        F.size(F.collect_set("target").over(of_test)).alias("targets_of_test"),
        F.collect_list(F.struct("target", "driver", "status", "cell")).over(of_test).alias("cells_of_test"),
    )
    failing = marked.where(F.col("status").isin(*FAILING_STATUSES))
    return sorted_table(_with_cause(failing), "cell", "cause_order", "test_id").drop("cause_order")


def _with_cause(failing: DataFrame) -> DataFrame:
    """The cause and its reason from the counts :func:`blame` marked each failing cell x test with."""
    c = F.col
    another_driver_passes_here = c("passes_on_target") > 0
    passes_on_another_target = c("passes_with_driver") > 0
    is_target = ~another_driver_passes_here & (c("drivers_on_target") >= 2) & (F.size("drivers_passing_nowhere") == 0)
    is_driver = (
        ~passes_on_another_target
        & (c("targets_with_driver") >= 2)
        & (F.size("targets_passing_with_none") == 0)
        & (c("patterns_with_driver") == 1)
    )
    is_pair = another_driver_passes_here & passes_on_another_target
    is_everywhere = (c("passes_of_test") == 0) & (c("drivers_of_test") >= 2) & (c("targets_of_test") >= 2)
    cause = (
        F.when(is_target, "target")
        .when(is_driver, "driver")
        .when(is_pair, "pair")
        .when(is_everywhere, "everywhere")
        .otherwise("undecided")
    )
    target_side = (
        F.when(another_driver_passes_here, F.lit(None))
        .when(c("drivers_on_target") == 1, F.lit("no other driver ran it on this target"))
        .otherwise(
            F.concat(
                F.lit("fails with every driver on this target, but it passes on no other target with "),
                _listed(c("drivers_passing_nowhere")),
            )
        )
    )
    driver_side = (
        F.when(passes_on_another_target, F.lit(None))
        .when(c("targets_with_driver") == 1, F.lit("this driver ran it on no other target"))
        .when(
            F.size("targets_passing_with_none") > 0,
            F.concat(
                F.lit("fails with this driver on every target, but no other driver passes it on "),
                _listed(c("targets_passing_with_none")),
            ),
        )
        .otherwise(
            F.format_string(
                "fails with this driver on every target, but not the same way (%d different failure messages)",
                c("patterns_with_driver"),
            )
        )
    )
    reason = (
        F.when(
            is_target,
            F.format_string(
                "fails with every driver that ran it on this target (%d), and each of them passes it on another target",
                c("drivers_on_target"),
            ),
        )
        .when(
            is_driver,
            F.format_string(
                "fails with this driver on every target it ran on (%d), the same way, and another driver passes it "
                "on each of them",
                c("targets_with_driver"),
            ),
        )
        .when(is_pair, F.lit("another driver passes it on this target, and this driver passes it on another target"))
        .when(
            is_everywhere,
            F.format_string(
                "fails in every cell that ran it (%d drivers, %d targets)", c("drivers_of_test"), c("targets_of_test")
            ),
        )
        .otherwise(_undecided(target_side, driver_side, another_driver_passes_here, passes_on_another_target))
    )
    return failing.select(
        "cell",
        "driver",
        "target",
        *CELL_AXES,
        "spec_file",
        "test_id",
        "test",
        "status",
        "passed",
        "failures",
        "skipped",
        cause.alias("cause"),
        reason.alias("reason"),
        _evidence(c("cells_of_test")).alias("evidence"),
        (F.size("cells_of_test") - 1).alias("other_cells"),
        "expected",
        "expectation_kinds",
        "message",
        "messages",
        cause_order(cause).alias("cause_order"),
    )


def _undecided(target_side: Column, driver_side: Column, passes_here: Column, passes_elsewhere: Column) -> Column:
    """Why a failing cell x test is undecided: what is missing on the target's side and on the driver's."""
    c = F.col
    return (
        F.when((c("drivers_of_test") == 1) & (c("targets_of_test") == 1), F.lit("no other cell ran it"))
        .when(
            (c("targets_of_test") == 1) & ~passes_here,
            F.format_string(
                "fails with every driver that ran it (%d), and no other target ran it", c("drivers_on_target")
            ),
        )
        .when(
            (c("drivers_of_test") == 1) & ~passes_elsewhere,
            F.format_string(
                "fails on every target that ran it (%d), and no other driver ran it", c("targets_with_driver")
            ),
        )
        .otherwise(F.concat_ws("; ", target_side, driver_side))
    )


def cause_order(cause: Column) -> Column:
    """The position of ``cause`` in :data:`CAUSES` (for sorting)."""
    ordered = F.lit(len(CAUSES))
    for index, name in reversed(list(enumerate(CAUSES))):
        ordered = F.when(cause == name, index).otherwise(ordered)
    return ordered


def cause_column(cause: str) -> str:
    """The :func:`blame_cells` column counting the cell's failing tests with ``cause`` (``cause_target``)."""
    return f"cause_{cause}"


def blame_cells(cells: DataFrame, blamed: DataFrame, versions: DataFrame) -> DataFrame:
    """One row per cell (``cells``, the conformance table), failing tests included or not: its tests counted by cause.

    ``failing_tests`` is every test that fails or is flaky in the cell, ``expected_failures`` those the
    expected-outcomes file listed, and ``summary`` says it in words ("no failing test", "3 failing: 2 target, 1 pair").
    """
    counts = blamed.groupBy("cell").agg(
        F.count("*").alias("failing_tests"),
        *[F.count_if(F.col("cause") == cause).alias(cause_column(cause)) for cause in CAUSES],
        F.count_if(F.col("expected")).alias("expected_failures"),
    )
    by_cause = [cause_column(cause) for cause in CAUSES]
    zero: dict[str, bool | float | int | str] = dict.fromkeys(("failing_tests", "expected_failures", *by_cause), 0)
    joined = (
        cells.select("cell", *CELL_AXES)
        .join(counts, "cell", "left")
        .fillna(zero)
        .select("*", driver_of(F.col("cell")).alias("driver"), target_of(F.col("cell")).alias("target"))
    )
    counted = [F.when(F.col(cause_column(c)) > 0, F.format_string(f"%d {c}", F.col(cause_column(c)))) for c in CAUSES]
    summary = F.when(F.col("failing_tests") == 0, F.lit("no failing test")).otherwise(
        F.concat(F.format_string("%d failing: ", F.col("failing_tests")), F.concat_ws(", ", *counted))
    )
    ranked = with_version_rank(
        with_version_rank(joined, "driver_version", versions, "driver_rank"), "target_version", versions, "target_rank"
    )
    columns = ("cell", "driver", "target", *CELL_AXES, "failing_tests", *by_cause, "expected_failures")
    table = ranked.select(*columns, summary.alias("summary"), "driver_rank", "target_rank")
    return sorted_table(table, "driver_name", "driver_rank", "target_name", "target_rank", "cell").drop(
        "driver_rank", "target_rank"
    )
