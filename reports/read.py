"""Read the inputs with explicit schemas: JSON lines, JUnit XML and the job's own Parquet.

Nothing is dropped silently. A JSON line that is torn, not JSON, or not a
record, a record whose outcome is none of the four (it is not counted), and a
JUnit file that is not well-formed XML, become rows of ``input_problems``
(file, problem, how many lines, the first example); a file that yields no
record at all is named too. What *is* a record comes back as
a struct column ``r`` in the record schema, so JSON lines and the JUnit
property (the same record as one JSON string) normalise identically.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from reports.discover import InputFiles
from reports.outcomes import OUTCOMES
from reports.schema import (
    CELL_KIND,
    CORRUPT,
    INPUT_PROBLEM,
    JSON_LINE,
    JUNIT_TESTCASE,
    JUNIT_TESTSUITE,
    RESULT_KIND,
    RESULT_RECORD,
    VERDICT,
)

#: The JUnit property the pytest plugin writes: the whole result record as one JSON string.
RESULT_PROPERTY = "cs-harness.result"
EXAMPLE_CHARS = 200
_PARSE = {"columnNameOfCorruptRecord": CORRUPT, "mode": "PERMISSIVE"}


@dataclass
class RawInputs:
    """What the files hold, by kind; every frame carries ``file`` (the input it came from)."""

    results: DataFrame  # r: RESULT_RECORD, source, file
    pytest_cases: DataFrame  # JUnit testcases without a harness record, with their suite's timestamp and host
    verdicts: DataFrame  # already normalised (the job's own Parquet), VERDICT columns
    cells: DataFrame  # cs-harness.cell/1 records
    problems: DataFrame  # INPUT_PROBLEM rows
    #: What the first pass over the JSON lines saw besides the results (None without JSON lines).
    lines_seen: Observation | None = None


def file_path(column: str = "_metadata.file_path") -> Column:
    """The input's local path, as the user would recognise it (no ``file:`` URL, no %-escapes)."""
    return F.url_decode(F.regexp_replace(F.col(column), r"^file:(//)?", ""))


def read_inputs(spark: SparkSession, found: InputFiles) -> RawInputs:
    """Read every discovered input; problems of each kind are gathered in one frame."""
    lines, lines_seen = observed_lines(read_json_lines(spark, found.jsonl), bool(found.jsonl))
    testcases = read_junit_testcases(spark, found.junit)
    as_result = F.struct(*[F.col("r")[f.name].alias(f.name) for f in RESULT_RECORD.fields]).alias("r")
    results = lines.where(F.col("kind") == "result").select(as_result, F.lit("jsonl").alias("source"), "file")
    if found.junit:  # an empty side would still cost tasks in every job that reads the results
        results = results.unionByName(junit_results(testcases))
    pytest_cases = junit_pytest_cases(spark, testcases, found.junit)
    cells = lines.where(F.col("kind") == "cell").select(
        "file", *[F.col("r")[name].alias(name) for name in ("matrix", "cell", "labels", "stage", "reason", "at")]
    )
    problems = (
        line_problems(lines)
        .unionByName(junit_problems(testcases))
        .unionByName(files_without_records(spark, found, [results, pytest_cases, cells]))
        .unionByName(spark.createDataFrame([(f, p, None, None) for f, p in found.problems], INPUT_PROBLEM))
    )
    return RawInputs(
        results=results,
        pytest_cases=pytest_cases,
        verdicts=read_verdicts(spark, found.parquet),
        cells=cells,
        problems=problems,
        lines_seen=lines_seen,
    )


#: Record kinds that are not input problems.
RECORD_KINDS = ("result", "cell")


def observed_lines(lines: DataFrame, any_lines: bool) -> tuple[DataFrame, Observation | None]:
    """``lines`` with what the first action over them sees: lines that are not results, and the files with records.

    The action that writes the verdicts is that first pass; :func:`after_one_read` reads its figures, so
    inputs that hold nothing but results (the usual case) are parsed once, not once more per kind of row.
    """
    if not any_lines:
        return lines, None
    seen = Observation("json lines")
    kind = F.col("kind")
    observed = lines.observe(
        seen,
        F.count_if(~kind.isin(*RECORD_KINDS)).alias("other_lines"),
        F.count_if(kind == "cell").alias("cell_lines"),
        F.collect_set(F.when(kind.isin(*RECORD_KINDS), F.col("file"))).alias("files_with_records"),
    )
    return observed, seen


def after_one_read(spark: SparkSession, raw: RawInputs, found: InputFiles) -> RawInputs:
    """``raw`` once its results were written: cells and problems without reading the JSON lines again, if possible.

    When the first pass saw only result records and JUnit is not involved, there are no cells and no line
    problems, and the files without records are known from that pass: the lines are not parsed again. Any
    other line (torn, not a record, a matrix cell) leaves ``raw`` as it is, to be read in full.
    """
    if raw.lines_seen is None or found.junit:
        return raw
    seen = raw.lines_seen.get
    if seen["other_lines"] or seen["cell_lines"]:
        return raw
    with_records = set(seen["files_with_records"])
    problems = [(f, "no result records in this file", None, None) for f in found.jsonl if f not in with_records]
    problems += [(f, p, None, None) for f, p in found.problems]
    return replace(
        raw,
        cells=raw.cells.limit(0),
        problems=spark.createDataFrame(problems, INPUT_PROBLEM),
    )


def read_json_lines(spark: SparkSession, files: list[str]) -> DataFrame:
    """Each non-blank line: ``file``, ``position`` (file order), ``value``, parsed ``r`` and its ``kind``."""
    if not files:
        return spark.createDataFrame([], "file string, position long, value string, kind string").withColumn(
            "r", F.lit(None).cast(JSON_LINE)
        )
    parsed = (
        spark.read.text(files)
        .select(file_path().alias("file"), F.monotonically_increasing_id().alias("position"), "value")
        .where(F.trim("value") != "")
        .withColumn("r", F.from_json("value", JSON_LINE, _PARSE))
    )
    record = F.col("r.record")
    kind = (
        F.when(
            F.col("r").getField(CORRUPT).isNotNull(), "malformed line (torn, not JSON, or a field of the wrong type)"
        )
        .when(
            (record == RESULT_KIND) & (F.col("r.test_id").isNull() | F.col("r.outcome").isNull()),
            "result record without test_id or outcome",
        )
        .when(record == RESULT_KIND, F.coalesce(unknown_outcome(F.col("r.outcome")), F.lit("result")))
        .when(record == CELL_KIND, "cell")
        .when(record.isNull(), 'not a record (no "record" field)')
        .otherwise(F.concat(F.lit("unknown record type "), record))
    )
    return parsed.withColumn("kind", kind)


def unknown_outcome(outcome: Column) -> Column:
    """The input problem of a record whose ``outcome`` is none of the four (null when it is one of them): such
    a record is named, with its outcome, and not counted, since no table knows what it would mean."""
    known = ", ".join(OUTCOMES)
    return F.when(
        ~outcome.isin(*OUTCOMES), F.concat(F.lit('unknown outcome "'), outcome, F.lit(f'" (not one of {known})'))
    )


def line_problems(lines: DataFrame) -> DataFrame:
    """Lines that are not records, counted per file and problem, with the first one as the example."""
    return (
        lines.where(~F.col("kind").isin("result", "cell"))
        .groupBy("file", F.col("kind").alias("problem"))
        .agg(F.count("*").alias("lines"), F.substring(F.min_by("value", "position"), 1, EXAMPLE_CHARS).alias("example"))
    )


def read_junit_testcases(spark: SparkSession, files: list[str]) -> DataFrame:
    """Every ``<testcase>`` through Spark's XML source, with the harness record property pulled out."""
    if not files:
        return (
            spark.createDataFrame([], JUNIT_TESTCASE)
            .withColumn("file", F.lit(None).cast("string"))
            .withColumn("record_json", F.lit(None).cast("string"))
        )
    cases = (
        spark.read.format("xml")
        .option("rowTag", "testcase")
        .option("mode", "PERMISSIVE")
        .schema(JUNIT_TESTCASE)
        .load(files)
    )
    harness_property = F.filter("properties.property", lambda p: p["_name"] == RESULT_PROPERTY)
    return cases.select(
        "*", file_path().alias("file"), F.try_element_at(harness_property, F.lit(1))["_value"].alias("record_json")
    )


def junit_results(testcases: DataFrame) -> DataFrame:
    """Testcases carrying the harness's record: the same record schema as a JSON line."""
    return (
        testcases.where(F.col("record_json").isNotNull())
        .select(F.from_json("record_json", RESULT_RECORD).alias("r"), F.lit("junit").alias("source"), "file")
        .where((F.col("r.record") == RESULT_KIND) & unknown_outcome(F.col("r.outcome")).isNull())
    )


def junit_pytest_cases(spark: SparkSession, testcases: DataFrame, files: list[str]) -> DataFrame:
    """Testcases without a harness record (ordinary pytest tests), with their suite's timestamp and host."""
    plain = testcases.where(F.col("record_json").isNull() & F.col(CORRUPT).isNull() & F.col("_name").isNotNull())
    if not files:
        return plain.withColumn("suite_timestamp", F.lit(None).cast("string")).withColumn(
            "suite_host", F.lit(None).cast("string")
        )
    suites = (
        spark.read.format("xml")
        .option("rowTag", "testsuite")
        .schema(JUNIT_TESTSUITE)
        .load(files)
        .groupBy(file_path().alias("file"))
        .agg(F.min("_timestamp").alias("suite_timestamp"), F.min("_hostname").alias("suite_host"))
    )
    return plain.join(F.broadcast(suites), "file", "left")


def junit_problems(testcases: DataFrame) -> DataFrame:
    """JUnit files that are not well-formed XML, and harness properties that are not a record."""
    bad_property = F.col("record_json").isNotNull() & (
        F.coalesce(F.from_json("record_json", RESULT_RECORD)["record"], F.lit("")) != RESULT_KIND
    )
    problem = (
        F.when(F.col(CORRUPT).isNotNull(), "malformed XML")
        .when(bad_property, f"the {RESULT_PROPERTY} property is not a {RESULT_KIND} record")
        .when(
            F.col("record_json").isNotNull(),
            unknown_outcome(F.from_json("record_json", RESULT_RECORD)["outcome"]),
        )
    )
    example = F.coalesce(F.col(CORRUPT), F.col("record_json"))
    return (
        testcases.select("file", problem.alias("problem"), example.alias("example"))
        .where(F.col("problem").isNotNull())
        .groupBy("file", "problem")
        .agg(F.count("*").alias("lines"), F.substring(F.min("example"), 1, EXAMPLE_CHARS).alias("example"))
    )


def files_without_records(spark: SparkSession, found: InputFiles, frames: list[DataFrame]) -> DataFrame:
    """Input files from which not one record or testcase was read."""
    every_file = spark.createDataFrame([(f,) for f in found.jsonl + found.junit], "file string")
    used = frames[0].select("file")
    for frame in frames[1:]:
        used = used.unionByName(frame.select("file"))
    return every_file.join(used.distinct(), "file", "left_anti").select(
        "file",
        F.lit("no result records in this file").alias("problem"),
        F.lit(None).cast("long").alias("lines"),
        F.lit(None).cast("string").alias("example"),
    )


def read_verdicts(spark: SparkSession, directories: list[str]) -> DataFrame:
    """Normalised verdicts the job wrote itself (``--append-to``), read with the verdict schema."""
    if not directories:
        return spark.createDataFrame([], VERDICT)
    return spark.read.schema(VERDICT).parquet(*directories)
