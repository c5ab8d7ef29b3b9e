"""Explicit Spark schemas: what the job reads and the normalised verdict it makes.

Records are parsed with these schemas, never with one inferred from a
sample: inference reads the data twice, guesses a type from whatever lines
came first, and silently changes the columns when a new field appears. Only
the fields the report uses are declared; anything else in a record is
ignored. ``_corrupt_record`` receives a line that is not JSON or has a field
of the wrong type, so it can be counted and named instead of dropped.
"""

from __future__ import annotations

from pyspark.sql import types as T

from harness.record import fields as record_fields
from harness.record.causes import CAUSE as CAUSE_FIELDS
from harness.record.schema import CELL, RESULT
from harness.record.schema import CELL_KIND as CELL_KIND  # the readers name the record kinds from here
from harness.record.schema import RESULT_KIND as RESULT_KIND

S, L, D, B = T.StringType(), T.LongType(), T.DoubleType(), T.BooleanType()
CORRUPT = "_corrupt_record"
#: How each of the record description's scalar types is read; ``json`` (any value) is kept as its JSON text.
_SCALARS: dict[str, T.DataType] = {
    record_fields.STRING: S,
    record_fields.LONG: L,
    record_fields.DOUBLE: D,
    record_fields.BOOLEAN: B,
    record_fields.JSON: S,
}


def _struct(*fields: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType([T.StructField(name, kind) for name, kind in fields])


def spark_type(kind: record_fields.Type) -> T.DataType:
    """The Spark type of a described field: a struct keeps its ``reported`` fields only, each nullable (records
    written before a field existed lack it)."""
    if kind.kind == record_fields.LIST:
        assert kind.item is not None
        return T.ArrayType(spark_type(kind.item))
    if kind.kind == record_fields.MAP:
        assert kind.item is not None
        return T.MapType(S, spark_type(kind.item))
    if kind.kind == record_fields.STRUCT:
        return T.StructType([T.StructField(f.name, spark_type(f.type)) for f in kind.fields if f.reported])
    return _SCALARS[kind.kind]


#: One cause of a failing record (docs/causes.md): the fields the report judges and groups by. A verdict keeps a
#: list of them as JSON text (VERDICT's ``causes``), read back with this schema.
CAUSE = spark_type(CAUSE_FIELDS)
CAUSES = T.ArrayType(CAUSE)

#: ``cs-harness.result/1`` (harness/record/schema.py, docs/record.md): the fields the report reads.
RESULT_RECORD = spark_type(RESULT)

#: ``cs-harness.cell/1``: a matrix cell that could not be built or run.
CELL_RECORD = spark_type(CELL)

#: One JSON line, parsed against every record kind at once; ``record`` says which one it is.
JSON_LINE = T.StructType(
    list(RESULT_RECORD.fields)
    + [T.StructField(f.name, f.dataType) for f in CELL_RECORD.fields if f.name not in RESULT_RECORD.fieldNames()]
    + [T.StructField(CORRUPT, S)]
)

_JUNIT_TEXT = _struct(("_message", S), ("_type", S), ("_VALUE", S))

#: A JUnit ``<testcase>`` through Spark's XML source (attributes carry the ``_`` prefix).
JUNIT_TESTCASE = _struct(
    ("_classname", S),
    ("_name", S),
    ("_time", D),
    ("properties", _struct(("property", T.ArrayType(_struct(("_name", S), ("_value", S)))))),
    ("failure", _JUNIT_TEXT),
    ("error", _JUNIT_TEXT),
    ("skipped", _JUNIT_TEXT),
    (CORRUPT, S),
)

#: A JUnit ``<testsuite>``: only its attributes (when and where pytest ran).
JUNIT_TESTSUITE = _struct(("_name", S), ("_timestamp", S), ("_hostname", S), (CORRUPT, S))

#: The normalised verdict: one row per test verdict (docs/reports.md, "The normalised verdict").
VERDICT = _struct(
    ("run_id", S),
    ("started_at", T.TimestampType()),
    ("format", S),
    ("spec_file", S),
    ("test_id", S),
    ("test", S),
    ("outcome", S),
    ("message", S),
    ("duration_s", D),
    ("driver_name", S),
    ("driver_version", S),
    # ``driver.iteration_mode``: how the driver consumed change streams (docs/executor-protocol.md 6.4.1), part of
    # the cell; null for a pytest testcase, a record written before the field and a history's Parquet from before it.
    ("iteration_mode", S),
    ("target_name", S),
    ("target_kind", S),
    ("topology", S),
    ("server_version", S),
    ("target_version", S),
    ("failpoints", S),
    ("network_faults", B),
    ("matrix", S),
    ("cell_label", S),
    ("repeat", T.IntegerType()),
    ("cell", S),
    ("expected", B),
    ("expectation_kind", S),
    ("error_code", T.IntegerType()),
    ("error_code_name", S),
    ("message_pattern", S),
    ("faults_injected", L),
    ("resumes", L),
    ("anomalies", L),
    ("disallowed_errors", L),
    ("events", L),
    ("source", S),
    ("rules", T.ArrayType(S)),
    # Why a failing verdict failed (docs/causes.md): the record's causes as JSON text (RESULT_RECORD's fields of
    # a cause), null when it has none (a pass or skip, a record written before causes, a pytest testcase).
    ("causes", S),
    # The record's ``expectation.reason``: a known deviation's entries and reasons as the run worded them.
    ("expectation_reason", S),
    # How many of the test's steps a cause kept from being checked (``not_reached``); null before causes.
    ("not_reached", L),
)
VERDICT_COLUMNS = [f.name for f in VERDICT.fields]

#: One row per (verdict, rule it checks): :func:`reports.normalise.verdicts_by_rule`.
RULE_VERDICT_COLUMNS = ["rule", "rule_area", *VERDICT_COLUMNS]

#: One row per input file with a problem (file-level or counted lines).
INPUT_PROBLEM = _struct(("file", S), ("problem", S), ("lines", L), ("example", S))
