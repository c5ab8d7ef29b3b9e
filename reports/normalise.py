"""One row per test verdict, axes as columns (docs/reports.md, "The normalised verdict").

Records from JSON lines and from the JUnit property arrive in one record
schema and go through :func:`verdicts_from_records`; JUnit testcases without
a harness record become ``format: pytest`` rows with unknown versions
(:func:`verdicts_from_pytest_cases`). Both then get the derived columns
(:func:`with_derived_columns`): the spec file, the cell, the error code and
a message pattern, all plain Spark expressions.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from reports.schema import VERDICT, VERDICT_COLUMNS
from reports.statements import EXECUTOR_SUFFIX

UNKNOWN = "unknown"
#: What a pytest testcase has in place of a record's causes: nothing (judged by its outcome and message).
NO_CAUSES = (("causes", "string"), ("expectation_reason", "string"), ("not_reached", "long"))
#: ``code N (Name)``, as the harness writes every driver error (``ErrorInfo.describe``).
ERROR_CODE = r"\bcode (\d+)(?: \((\w+)\))?"
PATTERN_CHARS = 300

#: Placeholders for the variable parts of a message, applied in order (quoted values first,
#: so a number inside quotes does not become two placeholders).
MESSAGE_PLACEHOLDERS = (
    (r"'[^']*'", "'<str>'"),
    (r'"[^"]*"', '"<str>"'),
    (r"\b[0-9a-fA-F]{24}\b", "<oid>"),
    (r"\b0x[0-9a-fA-F]+\b", "<hex>"),
    (r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b", "<hex>"),
    (r"\b\d{1,3}(\.\d{1,3}){3}\b", "<ip>"),
    (r"(?<=[\w>\]]):\d{2,5}\b", ":<port>"),
    (r"\d+(\.\d+)?", "<n>"),
)


def verdicts_from_records(results: DataFrame) -> DataFrame:
    """Result records (column ``r``, plus ``source``) as base verdict columns."""
    r = F.col("r")
    labels, details, target = r["labels"], r["details"], r["target"]
    network = target["details"]["network_faults"]
    is_campaign = r["format"] == "campaign"
    return with_derived_columns(
        results.select(
            r["run_id"].alias("run_id"),
            r["started_at"].try_cast("timestamp").alias("started_at"),
            r["format"].alias("format"),
            r["test_id"].alias("test_id"),
            r["test"].alias("test"),
            r["outcome"].alias("outcome"),
            r["message"].alias("message"),
            r["duration_s"].alias("duration_s"),
            driver_name(r["driver"]).alias("driver_name"),
            r["driver"]["version"].alias("driver_version"),
            r["driver"]["iteration_mode"].alias("iteration_mode"),
            target["name"].alias("target_name"),
            target["kind"].alias("target_kind"),
            target["topology"].alias("topology"),
            target["version"].alias("server_version"),
            F.coalesce(target["details"]["package_version"], target["details"]["release"], target["version"]).alias(
                "target_version"
            ),
            r["failpoints"].alias("failpoints"),
            (network.isNotNull() & ~F.lower(network).isin("false", "null", "", "{}", "[]")).alias("network_faults"),
            labels["matrix"].alias("matrix"),
            labels["cell"].alias("cell_label"),
            labels["repeat"].try_cast("int").alias("repeat"),
            r["expectation"]["expected"].alias("expected"),
            r["expectation"]["kind"].alias("expectation_kind"),
            F.when(is_campaign, F.size(details["faults"])).cast("long").alias("faults_injected"),
            F.when(is_campaign, details["resumes"]).alias("resumes"),
            F.when(is_campaign, F.size(details["anomalies"])).cast("long").alias("anomalies"),
            F.when(is_campaign, details["disallowed_errors"]).alias("disallowed_errors"),
            F.when(is_campaign, details["events"]).alias("events"),
            "source",
            F.coalesce(r["rules"], F.array().cast("array<string>")).alias("rules"),
            causes_text(r["causes"]).alias("causes"),
            r["expectation"]["reason"].alias("expectation_reason"),
            F.when(r["not_reached"].isNotNull(), F.size(r["not_reached"])).alias("not_reached"),
        )
    )


def causes_text(causes: Column) -> Column:
    """A record's causes as JSON text, null when it has none.

    Text, not a nested column: only failing verdicts have causes, the tables read them for a few percent of the
    verdicts (the latest failure, blame), and a string column costs nothing in the Parquet of a passing one.
    """
    return F.when(F.size(causes) > 0, F.to_json(causes))


def suite_started() -> Column:
    """When a pytest testcase's suite started (its ``timestamp``)."""
    return F.col("suite_timestamp").try_cast("timestamp")


def pytest_run_id() -> Column:
    """The run a plain pytest testcase belongs to: ``junit-`` when and where its suite ran (its file, when the
    suite has no timestamp)."""
    return F.concat(
        F.lit("junit-"),
        F.coalesce(F.date_format(suite_started(), "yyyyMMdd'T'HHmmss'Z'"), F.col("file")),
        F.lit("-"),
        F.coalesce("suite_host", F.lit(UNKNOWN)),
    )


def verdicts_from_pytest_cases(cases: DataFrame) -> DataFrame:
    """Ordinary pytest testcases (JUnit without a harness record): outcome from failure/error/skipped."""
    xfail = F.col("skipped._type") == "pytest.xfail"
    outcome = (
        F.when(F.col("failure").isNotNull(), "failed")
        .when(F.col("error").isNotNull(), "error")
        .when(xfail, "failed")
        .when(F.col("skipped").isNotNull(), "skipped")
        .otherwise("passed")
    )
    message = F.coalesce(
        F.col("failure._message"),
        F.col("error._message"),
        F.col("skipped._message"),
        F.col("failure._VALUE"),
        F.col("error._VALUE"),
    )
    test_id = F.concat_ws("::", F.coalesce("_classname", F.lit(UNKNOWN)), "_name")
    unknown = F.lit(UNKNOWN)
    return with_derived_columns(
        cases.select(
            pytest_run_id().alias("run_id"),
            suite_started().alias("started_at"),
            F.lit("pytest").alias("format"),
            test_id.alias("test_id"),
            F.col("_name").alias("test"),
            outcome.alias("outcome"),
            message.alias("message"),
            F.col("_time").alias("duration_s"),
            unknown.alias("driver_name"),
            unknown.alias("driver_version"),
            F.lit(None).cast("string").alias("iteration_mode"),
            unknown.alias("target_name"),
            unknown.alias("target_kind"),
            unknown.alias("topology"),
            unknown.alias("server_version"),
            unknown.alias("target_version"),
            F.lit(None).cast("string").alias("failpoints"),
            F.lit(False).alias("network_faults"),
            *[
                F.lit(None).cast(kind).alias(name)
                for name, kind in (("matrix", "string"), ("cell_label", "string"), ("repeat", "int"))
            ],
            F.when(xfail, True).alias("expected"),
            F.when(xfail, "xfail").alias("expectation_kind"),
            *[
                F.lit(None).cast("long").alias(name)
                for name in ("faults_injected", "resumes", "anomalies", "disallowed_errors", "events")
            ],
            F.lit("junit").alias("source"),
            F.array().cast("array<string>").alias("rules"),
            *[F.lit(None).cast(kind).alias(name) for name, kind in NO_CAUSES],
        )
    )


#: The parts of a cell's name, in order ("/" separates the driver from the target). A missing name or version reads
#: ``unknown``; ``iteration_mode`` (``[emitter]``), ``failpoints`` and ``network_faults`` (``+netfaults``) are named
#: only when set (:func:`cell_name`).
CELL_PARTS = (
    "driver_name",
    "driver_version",
    "iteration_mode",
    "/",
    "target_name",
    "target_version",
    "topology",
    "failpoints",
    "network_faults",
)


def driver_name(driver: Column) -> Column:
    """The driver axis's name: the record's, with ``-executor`` for a Python driver that ran out of process.

    pymongo runs in the harness's process (``--driver pymongo``) or through the reference executor
    (``--driver pymongo-executor``); both records name the driver ``pymongo``, but they are two configurations
    of a matrix and must be two cells. Drivers of other languages only ever run through an executor.
    """
    out_of_process = driver["executor"].isNotNull() & (driver["language"] == "python")
    return F.when(out_of_process, F.concat(driver["name"], F.lit(EXECUTOR_SUFFIX))).otherwise(driver["name"])


def cell_name(omit: str | None = None, configured: Column | None = None) -> Column:
    """``driver_name driver_version [iteration_mode] / target_name target_version topology failpoints`` (+netfaults).

    The iteration mode is named only when the verdict has one (``node 7.9.0 [emitter] / ...``): a record written
    before ``driver.iteration_mode``, a pytest testcase and a history's verdicts from before the column keep the
    name they always had. With ``omit`` (a version axis), the same name without that part: the context a version
    is compared in (the mode stays in it: a version is compared with itself in the same mode).
    A campaign always brings its own Toxiproxy, so its records belong to the cell they ran in, not to a
    ``+netfaults`` one: only spec and prose runs made with ``--network-faults`` are a configuration of their own.
    ``configured`` is that condition when a frame holds it already (aggregates keep it, not the record's format).
    """
    rendering = {
        "/": F.lit("/"),
        # null (left out) without a mode
        "iteration_mode": F.concat(F.lit("["), F.nullif(F.col("iteration_mode"), F.lit("")), F.lit("]")),
        "failpoints": F.col("failpoints"),
        "network_faults": F.when(
            network_faults_configured() if configured is None else configured, F.lit("+netfaults")
        ),
    }
    return F.concat_ws(
        " ", *[rendering.get(part, F.coalesce(F.col(part), F.lit(UNKNOWN))) for part in CELL_PARTS if part != omit]
    )


def network_faults_configured() -> Column:
    """Whether the run was configured with network faults (a campaign's own Toxiproxy does not count)."""
    return F.col("network_faults") & (F.col("format") != "campaign")


def message_pattern(message: Column) -> Column:
    """The first line of a message with its variable parts replaced, so one cause reads as one pattern."""
    pattern = F.substring_index(F.coalesce(message, F.lit("")), "\n", 1)
    for regex, placeholder in MESSAGE_PLACEHOLDERS:
        pattern = F.regexp_replace(pattern, regex, placeholder)
    return F.substring(F.trim(pattern), 1, PATTERN_CHARS)


def with_derived_columns(base: DataFrame) -> DataFrame:
    """Add the spec file, cell, error code and message pattern; cast to the verdict schema, in its order."""
    message = F.col("message")
    code = F.regexp_extract(message, ERROR_CODE, 1)
    code_name = F.regexp_extract(message, ERROR_CODE, 2)
    failing = F.col("outcome").isin("failed", "error")
    derived = base.select(
        "*",
        F.substring_index("test_id", "::", 1).alias("spec_file"),
        cell_name().alias("cell"),
        F.when(failing, F.nullif(code, F.lit("")).try_cast("int")).alias("error_code"),
        F.when(failing, F.nullif(code_name, F.lit(""))).alias("error_code_name"),
        F.when(failing, message_pattern(message)).alias("message_pattern"),
    )
    return derived.select([F.col(f.name).cast(f.dataType).alias(f.name) for f in VERDICT.fields])


def conform(verdicts: DataFrame) -> DataFrame:
    """Any frame with the verdict columns, in the verdict schema's order and types (for unions)."""
    return verdicts.select([F.col(name).cast(VERDICT[name].dataType) for name in VERDICT_COLUMNS])


def verdicts_by_rule(verdicts: DataFrame) -> DataFrame:
    """One row per verdict and rule it checks (``rule``, and ``rule_area``: ``CS-RESUME``, ``SRV``), to group by.

    A verdict that names no rule has no row here; count those from the verdicts themselves.
    """
    rule = F.col("rule")
    area = F.when(rule.startswith("SRV-"), F.lit("SRV")).otherwise(F.regexp_extract(rule, r"^([A-Z]+-[A-Z0-9]+)", 1))
    exploded = verdicts.select(F.explode("rules").alias("rule"), *[F.col(name) for name in VERDICT_COLUMNS])
    return exploded.select(rule, area.alias("rule_area"), *VERDICT_COLUMNS)
