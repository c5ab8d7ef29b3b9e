"""Blame: for each cause of a failure in a cell, whether its target, its driver or the pair is where it lies.

A verdict says that a test failed; its causes (docs/causes.md) say why, one broken check each. Blame is
decided per cause, not per test: a test can fail in one cell for two reasons, one the target's and one the
driver's, and only its causes can tell them apart. A cause is grouped across cells by its *signature*:

- explained by an expected-outcomes entry: its clause, its rule and the entry (``event | CS-OPT-AGGREGATE |
  drivers/pymongo.yml#collation-not-sent``): the entry's one fault, whatever values the fact shows;
- unexplained: its clause and its fact's pattern (:func:`reports.normalise.message_pattern`: numbers, ids and
  quoted values replaced), so one fault worded alike in every cell is one signature;
- a failing verdict without causes (a record written before them, a pytest testcase): one pseudo-cause,
  ``message`` and the message's pattern.

A cell is a pair: the *driver* (name and version, the part of the cell's name before `` / ``) and the *target*
(everything after it: target name and version, topology, fail points, network faults). Topology, fail points and
network faults belong to the target because they describe what the driver talks to.

Per test and signature, a cell that ran the test *decides* the cause when it *shows* it (a failing verdict there
has a cause of that signature) or is *clear* of it: the test passed there, or failed there without it where it
would have been seen. A failure shows that much when it ran every operation and check (nothing ``not_reached``,
and only causes after which a test goes on, :data:`GOES_ON`); for a cause of an expected list (an event, a log
message) it must also have no list cause of its own, since the first difference ends a list
(:data:`LIST_CLAUSES`). A cell where the test was skipped, or failed only on other causes that may have hidden
this one (an error that stopped the test, a differing event, a prose check, a harness error, a record without
causes), is no evidence either way; a message standing for a cause is cleared only by a pass. A cell that both
shows it and is clear of it shows it at times (``flaky``). For a cause shown with driver D on target T:

- ``target``: every driver that decided it on T shows it (at least two drivers), and each of them is clear of it
  on some other target;
- ``driver``: D shows it on every target that decided it (at least two), and on each of them some other driver
  is clear of it;
- ``pair``: another driver is clear of it on T, and D is clear of it on another target;
- ``everywhere``: every cell that decided it shows it, and those span at least two drivers and two targets;
- ``undecided``: none of these; the reason says what is missing instead of a guess.

The rules are exclusive: a target is blamed only when drivers that can be clear of the cause show it there, a
driver only when targets that can be clear of it show it with that driver. The signature is what makes "the same
fault" comparable across cells (one driver's one fault has one signature on every target; a different fact on
one target is a different cause, blamed on its own). Everything is computed with window functions over the
cell x test x signature statuses, on the executors, from the failing verdicts only (a few percent of them).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from reports.conformance import CELL_AXES
from reports.frames import sorted_table
from reports.normalise import message_pattern
from reports.outcomes import is_failure
from reports.schema import CAUSES as CAUSES_SCHEMA
from reports.versions import with_version_rank

#: Where a cause can lie, in the order the tables list them.
CAUSES = ("target", "driver", "pair", "everywhere", "undecided")
#: A cell's name is ``DRIVER / TARGET`` (:func:`reports.normalise.cell_name`).
DRIVER_AND_TARGET = r"^(.*?) / (.*)$"
#: Most distinct failure messages kept per row (the latest is always in ``message``).
MESSAGES = 5
#: Most evidence sentences kept per row (the nearest first; ``other_cells`` says how many there were).
EVIDENCE = 24
FAILING_STATUSES = ("fail", "flaky")
#: Clauses after which the test still runs every later operation and check (docs/causes.md, "When one failure makes
#: later checks meaningless"): a failure with only these, and nothing ``not_reached``, ran all of its test.
GOES_ON = ("result", "error-match", "event", "event-missing", "extra-events", "log-messages", "outcome")
#: Clauses of an expected list (``expectEvents``, ``expectLogMessages``): the first difference ends its list, so a
#: failure with one of them may hide another of them, and is evidence only for causes of other clauses.
LIST_CLAUSES = ("event", "event-missing", "extra-events", "log-messages")
#: The clause of the pseudo-cause a failing verdict without causes stands for.
MESSAGE_CLAUSE = "message"
SEPARATOR = " | "


def driver_of(cell: Column) -> Column:
    """The driver part of a cell's name (``pymongo 4.20.0``)."""
    return F.regexp_extract(cell, DRIVER_AND_TARGET, 1)


def target_of(cell: Column) -> Column:
    """The target part of a cell's name (``mongo-java-server 1.47.0 replicaset native``)."""
    return F.regexp_extract(cell, DRIVER_AND_TARGET, 2)


def _parsed_causes() -> Column:
    """A verdict's causes (its JSON text parsed); null or empty when it has none."""
    return F.from_json(F.col("causes"), CAUSES_SCHEMA)


def ran_everything() -> Column:
    """Whether a failing verdict ran every operation and check of its test, so that a cause it lacks (of a clause
    other than a list's) is absent from it.

    Only a record with causes can say so: its ``not_reached`` is empty and each of its causes is one after which
    the test goes on (:data:`GOES_ON`). A record without causes may have stopped anywhere.
    """
    causes = _parsed_causes()
    reached = (F.col("not_reached") == 0) & (F.size(causes) > 0)
    goes_on = F.forall(causes, lambda cause: F.coalesce(cause["clause"].isin(*GOES_ON), F.lit(False)))
    return F.coalesce(reached & goes_on, F.lit(False))


def lists_whole() -> Column:
    """Whether a failing verdict ran everything and compared every expected list to its end (no list cause), so
    that a list cause it lacks is absent from it too."""
    listed = F.exists(_parsed_causes(), lambda cause: F.coalesce(cause["clause"].isin(*LIST_CLAUSES), F.lit(False)))
    return ran_everything() & ~F.coalesce(listed, F.lit(False))


def signature(cause: Column) -> Column:
    """What makes two causes in two cells the same fault (module docstring): clause, rule and entry when an entry
    explains it; clause and the fact's pattern when none does."""
    clause = F.coalesce(cause["clause"], F.lit(MESSAGE_CLAUSE))
    rules = F.array_join(F.array_sort(F.coalesce(cause["rules"], F.array().cast("array<string>"))), ",")
    return F.when(cause["known"].isNotNull(), F.concat_ws(SEPARATOR, clause, rules, cause["known"])).otherwise(
        F.concat_ws(SEPARATOR, clause, message_pattern(cause["fact"]))
    )


def failing_causes(verdicts: DataFrame) -> DataFrame:
    """One row per failing verdict x cause: its signature, clause, rules, entry, fact and step, and the verdict's
    cell, test, time, message and expectation. A verdict without causes gives one pseudo-cause, its message.

    ``first`` marks a signature's first cause in its verdict (a test can break one entry's fault at two steps), so
    counting the marked rows counts verdicts, with no verdict id to make up.
    """
    causes = _parsed_causes()
    message_only = F.array(
        F.struct(
            F.lit(MESSAGE_CLAUSE).alias("clause"),
            F.lit(None).cast("string").alias("step"),
            F.lit(None).cast("string").alias("path"),
            F.col("message").alias("fact"),
            F.col("rules").alias("rules"),
            F.lit(None).cast("string").alias("known"),
        )
    )
    has_causes = F.coalesce(F.size(causes) > 0, F.lit(False))
    listed = verdicts.where(is_failure()).select(
        "cell",
        "test_id",
        F.coalesce(F.col("started_at"), F.lit(0).cast("timestamp")).alias("at"),
        "message",
        "expected",
        "expectation_kind",
        has_causes.alias("has_causes"),
        ran_everything().alias("ran"),
        lists_whole().alias("whole"),
        F.when(has_causes, causes).otherwise(message_only).alias("causes"),
    )
    signed = listed.withColumn("signatures", F.transform("causes", signature))
    each = signed.select("*", F.posexplode("causes").alias("position", "c"))
    own = F.element_at("signatures", F.col("position") + 1)
    c = F.col("c")
    # with causes, a cause is expected when an entry explains it (false when a file was used and none did); without,
    # the verdict's own ``expected``
    explained = F.when(c["known"].isNotNull(), F.lit(True)).when(F.col("expected").isNotNull(), F.lit(False))
    return each.select(
        "cell",
        "test_id",
        "at",
        "message",
        "expectation_kind",
        "ran",
        "whole",
        own.alias("signature"),
        (F.array_position("signatures", own) == F.col("position") + 1).alias("first"),
        F.coalesce(c["clause"], F.lit(MESSAGE_CLAUSE)).alias("clause"),
        F.coalesce(c["rules"], F.array().cast("array<string>")).alias("rules"),
        c["known"].alias("known"),
        c["fact"].alias("fact"),
        c["step"].alias("step"),
        F.when(F.col("has_causes"), explained).otherwise(F.col("expected")).alias("expected"),
    )


def cause_occurrences(verdicts: DataFrame) -> DataFrame:
    """One row per cell x test x signature shown there: how many failing verdicts showed it (``seen``; ``ran_seen``
    and ``whole_seen``: those of them that ran everything, and compared every list too), the latest fact, step and
    message, up to MESSAGES messages, and whether expected-outcomes entries explained it."""
    latest = F.max(F.struct("at", "message", "fact", "step"))
    return (
        failing_causes(verdicts)
        .groupBy("cell", "test_id", "signature")
        .agg(
            F.min("clause").alias("clause"),
            F.min("rules").alias("rules"),
            F.min("known").alias("known"),
            F.count_if("first").alias("seen"),
            F.count_if(F.col("first") & F.col("ran")).alias("ran_seen"),
            F.count_if(F.col("first") & F.col("whole")).alias("whole_seen"),
            latest["fact"].alias("fact"),
            latest["step"].alias("step"),
            latest["message"].alias("message"),
            F.slice(F.array_sort(F.collect_set("message")), 1, MESSAGES).alias("messages"),
            # true: an entry explained every occurrence (a known deviation); null: no expected-outcomes file was used
            F.bool_and("expected").alias("expected"),
            F.array_join(F.array_sort(F.collect_set("expectation_kind")), ", ").alias("expectation_kinds"),
        )
    )


def cell_statuses(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test: driver, target, axes, status, counts, and how many failing verdicts ran everything
    (``ran_failures``) and compared every list too (``whole_failures``): the failures that show a cause absent.

    With ``per_test`` (:func:`reports.conformance.per_cell_test` of the same verdicts) the counts come from it and
    only the failing verdicts are read again.
    """
    failing = is_failure()
    if per_test is None:
        grouped = verdicts.groupBy("cell", "test_id").agg(
            F.min("spec_file").alias("spec_file"),
            F.min("test").alias("test"),
            *[F.min(axis).alias(axis) for axis in CELL_AXES],
            F.count_if(F.col("outcome") == "passed").alias("passed"),
            F.count_if(failing).alias("failures"),
            F.count_if(F.col("outcome") == "skipped").alias("skipped"),
            F.count_if(failing & ran_everything()).alias("ran_failures"),
            F.count_if(failing & lists_whole()).alias("whole_failures"),
        )
    else:
        ran = (
            verdicts.where(failing)
            .groupBy("cell", "test_id")
            .agg(
                F.count_if(ran_everything()).alias("ran_failures"),
                F.count_if(lists_whole()).alias("whole_failures"),
            )
        )
        grouped = per_test.join(ran, ["cell", "test_id"], "left").select(
            "cell",
            "test_id",
            "spec_file",
            "test",
            *CELL_AXES,
            "passed",
            (F.col("failed") + F.col("error")).alias("failures"),
            "skipped",
            *[F.coalesce(name, F.lit(0).cast("long")).alias(name) for name in ("ran_failures", "whole_failures")],
        )
    return grouped.select(
        "*",
        driver_of(F.col("cell")).alias("driver"),
        target_of(F.col("cell")).alias("target"),
        cause_status(F.col("passed") > 0, F.col("failures") > 0).alias("status"),
    )


def cause_status(clear: Column, shown: Column) -> Column:
    """``fail`` (shown, never clear), ``flaky`` (both), ``pass`` (clear), or null: no evidence either way."""
    return F.when(shown & clear, "flaky").when(shown, "fail").when(clear, "pass")


def cause_grid(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x test x signature that the cell decides: the cause's status there and, where it was shown,
    its occurrence (:func:`cause_occurrences`).

    Every signature of a test is set against every cell that ran the test: a cell shows it, is clear of it (the
    test passed there, or one of its failures there would have shown it and did not), or is left out.
    """
    statuses = cell_statuses(verdicts, per_test)
    occurrences = cause_occurrences(verdicts)
    signatures = occurrences.groupBy("test_id", "signature").agg(F.min("clause").alias("of_clause"))
    grid = (
        statuses.withColumnRenamed("status", "test_status")
        .join(signatures, "test_id")
        .join(occurrences, ["cell", "test_id", "signature"], "left")
    )
    shown = F.col("seen").isNotNull()
    clear = (F.col("passed") > 0) | _cleared_by_a_failure()
    return grid.withColumn("status", cause_status(clear, shown)).where(F.col("status").isNotNull())


def _cleared_by_a_failure() -> Column:
    """Whether a failure in the cell would have shown the cause and did not: one that ran everything (for a list's
    cause, compared every list too) among those that do not show it. A message standing for a cause (a record
    without causes) is cleared only by a pass: a failure with causes may be the same fault under its signature."""

    def more(failures: str, seen: str) -> Column:
        return F.col(failures) > F.coalesce(F.col(seen), F.lit(0))

    clause = F.col("of_clause")
    return (
        F.when(clause == MESSAGE_CLAUSE, F.lit(False))
        .when(clause.isin(*LIST_CLAUSES), more("whole_failures", "whole_seen"))
        .otherwise(more("ran_failures", "ran_seen"))
    )


def _count(condition: Column, window: WindowSpec) -> Column:
    return F.sum(condition.cast("int")).over(window)


def _listed(values: Column) -> Column:
    return F.array_join(F.array_sort(values), ", ")


def _evidence(cells: Column) -> Column:
    """The other cells' statuses for this cause as sentences (``clear with pymongo 4.20.0 on embedded ...``), at
    most EVIDENCE.

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
        verb = F.when(other["status"] == "pass", "clear").when(other["status"] == "fail", "shows it")
        return F.concat(
            verb.otherwise("shows it at times"), F.lit(" with "), other["driver"], F.lit(" on "), other["target"]
        )

    others = F.filter(cells, lambda other: other["cell"] != F.col("cell"))
    return F.transform(F.slice(F.array_sort(F.transform(others, keyed)), 1, EVIDENCE), sentence)


def blame(verdicts: DataFrame, per_test: DataFrame | None = None) -> DataFrame:
    """One row per cell x failing test x cause shown there: where the cause lies, why, the evidence, the messages.

    ``per_test``: :func:`reports.conformance.per_cell_test` of the same verdicts, when the job made it.
    """
    decided = cause_grid(verdicts, per_test)
    of_cause = ("test_id", "signature")
    on_target, with_driver, everywhere = (
        Window.partitionBy(*of_cause, "target"),
        Window.partitionBy(*of_cause, "driver"),
        Window.partitionBy(*of_cause),
    )
    clear = F.col("status") == "pass"
    counted = decided.select(
        "*",
        _count(clear, on_target).alias("clear_on_target"),
        F.count("*").over(on_target).alias("drivers_on_target"),
        _count(clear, with_driver).alias("clear_with_driver"),
        F.count("*").over(with_driver).alias("targets_with_driver"),
    )
    # second pass: what the other drivers on this target do elsewhere, what the other targets of this driver do
    never_elsewhere = F.when(F.col("clear_with_driver") == 0, F.col("driver"))
    nobody_clear = F.when(F.col("clear_on_target") == 0, F.col("target"))
    marked = counted.select(
        "*",
        F.collect_set(never_elsewhere).over(on_target).alias("drivers_clear_nowhere"),
        F.collect_set(nobody_clear).over(with_driver).alias("targets_clear_with_none"),
        _count(clear, everywhere).alias("clear_of_cause"),
        F.size(F.collect_set("driver").over(everywhere)).alias("drivers_of_cause"),
        F.size(F.collect_set("target").over(everywhere)).alias("targets_of_cause"),
        F.collect_list(F.struct("target", "driver", "status", "cell")).over(everywhere).alias("cells_of_cause"),
    )
    shown = marked.where(F.col("status").isin(*FAILING_STATUSES))
    return sorted_table(_with_cause(shown), "cell", "cause_order", "test_id", "signature").drop("cause_order")


def _with_cause(shown: DataFrame) -> DataFrame:
    """Where each shown cause lies, and why, from the counts :func:`blame` marked it with."""
    c = F.col
    another_driver_clear_here = c("clear_on_target") > 0
    clear_on_another_target = c("clear_with_driver") > 0
    is_target = ~another_driver_clear_here & (c("drivers_on_target") >= 2) & (F.size("drivers_clear_nowhere") == 0)
    is_driver = ~clear_on_another_target & (c("targets_with_driver") >= 2) & (F.size("targets_clear_with_none") == 0)
    is_pair = another_driver_clear_here & clear_on_another_target
    is_everywhere = (c("clear_of_cause") == 0) & (c("drivers_of_cause") >= 2) & (c("targets_of_cause") >= 2)
    cause = (
        F.when(is_target, "target")
        .when(is_driver, "driver")
        .when(is_pair, "pair")
        .when(is_everywhere, "everywhere")
        .otherwise("undecided")
    )
    reason = (
        F.when(
            is_target,
            F.format_string(
                "every driver that decided it on this target (%d) shows it, and each of them is clear of it on "
                "another target",
                c("drivers_on_target"),
            ),
        )
        .when(
            is_driver,
            F.format_string(
                "this driver shows it on every target that decided it (%d), and another driver is clear of it on "
                "each of them",
                c("targets_with_driver"),
            ),
        )
        .when(is_pair, F.lit("another driver is clear of it on this target, and this driver is clear of it elsewhere"))
        .when(
            is_everywhere,
            F.format_string(
                "every cell that decided it shows it (%d drivers, %d targets)",
                c("drivers_of_cause"),
                c("targets_of_cause"),
            ),
        )
        .otherwise(_undecided(another_driver_clear_here, clear_on_another_target))
    )
    return shown.select(
        "cell",
        "driver",
        "target",
        *CELL_AXES,
        "spec_file",
        "test_id",
        "test",
        "signature",
        "clause",
        "rules",
        "known",
        "fact",
        "step",
        "status",
        "test_status",
        "passed",
        "failures",
        "skipped",
        "seen",
        cause.alias("cause"),
        reason.alias("reason"),
        _evidence(c("cells_of_cause")).alias("evidence"),
        (F.size("cells_of_cause") - 1).alias("other_cells"),
        "expected",
        "expectation_kinds",
        "message",
        "messages",
        cause_order(cause).alias("cause_order"),
    )


def _undecided(clear_here: Column, clear_elsewhere: Column) -> Column:
    """Why a shown cause is undecided: what is missing on the target's side and on the driver's."""
    c = F.col
    target_side = (
        F.when(clear_here, F.lit(None))
        .when(c("drivers_on_target") == 1, F.lit("no other driver decided it on this target"))
        .otherwise(
            F.concat(
                F.lit("every driver on this target shows it, but it is clear on no other target with "),
                _listed(c("drivers_clear_nowhere")),
            )
        )
    )
    driver_side = (
        F.when(clear_elsewhere, F.lit(None))
        .when(c("targets_with_driver") == 1, F.lit("this driver decided it on no other target"))
        .otherwise(
            F.concat(
                F.lit("this driver shows it on every target, but no other driver is clear of it on "),
                _listed(c("targets_clear_with_none")),
            )
        )
    )
    return (
        F.when((c("drivers_of_cause") == 1) & (c("targets_of_cause") == 1), F.lit("no other cell decided it"))
        .when(
            (c("targets_of_cause") == 1) & ~clear_here,
            F.format_string(
                "every driver that decided it shows it (%d), and no other target decided it", c("drivers_on_target")
            ),
        )
        .when(
            (c("drivers_of_cause") == 1) & ~clear_elsewhere,
            F.format_string(
                "every target that decided it shows it (%d), and no other driver decided it", c("targets_with_driver")
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
    """The :func:`blame_cells` column counting the cell's causes that lie with ``cause`` (``cause_target``)."""
    return f"cause_{cause}"


def blame_cells(cells: DataFrame, blamed: DataFrame, versions: DataFrame) -> DataFrame:
    """One row per cell (``cells``, the conformance table), failing tests or not: its causes counted by where they lie.

    ``failing_tests`` is every test that fails or is flaky in the cell, ``causes`` the distinct causes those show
    (a test with two causes counts twice), ``known_causes`` those an expected-outcomes entry explained, and
    ``summary`` says it in words ("no failing test", "3 failing tests, 4 causes: 2 target, 1 driver, 1 pair").
    """
    counts = blamed.groupBy("cell").agg(
        F.count_distinct("test_id").alias("failing_tests"),
        F.count("*").alias("causes"),
        *[F.count_if(F.col("cause") == cause).alias(cause_column(cause)) for cause in CAUSES],
        F.count_if(F.col("known").isNotNull()).alias("known_causes"),
    )
    by_cause = [cause_column(cause) for cause in CAUSES]
    zero: dict[str, bool | float | int | str] = dict.fromkeys(("failing_tests", "causes", "known_causes", *by_cause), 0)
    joined = (
        cells.select("cell", *CELL_AXES)
        .join(counts, "cell", "left")
        .fillna(zero)
        .select("*", driver_of(F.col("cell")).alias("driver"), target_of(F.col("cell")).alias("target"))
    )
    counted = [F.when(F.col(cause_column(c)) > 0, F.format_string(f"%d {c}", F.col(cause_column(c)))) for c in CAUSES]
    summary = F.when(F.col("failing_tests") == 0, F.lit("no failing test")).otherwise(
        F.concat(
            F.format_string(
                "%d failing %s, %d %s: ",
                F.col("failing_tests"),
                _plural("failing_tests", "test"),
                F.col("causes"),
                _plural("causes", "cause"),
            ),
            F.concat_ws(", ", *counted),
        )
    )
    ranked = with_version_rank(
        with_version_rank(joined, "driver_version", versions, "driver_rank"), "target_version", versions, "target_rank"
    )
    columns = ("cell", "driver", "target", *CELL_AXES, "failing_tests", "causes", *by_cause, "known_causes")
    table = ranked.select(*columns, summary.alias("summary"), "driver_rank", "target_rank")
    return sorted_table(table, "driver_name", "driver_rank", "target_name", "target_rank", "cell").drop(
        "driver_rank", "target_rank"
    )


def _plural(count: str, noun: str) -> Column:
    """``noun`` or ``nouns`` after the figure in column ``count``."""
    return F.when(F.col(count) == 1, F.lit(noun)).otherwise(F.lit(noun + "s"))
