"""reports.session: loopback only, no UI, UTC, modest shuffles; an existing session is reused, not stopped;
the small-input profile gives the same tables as Spark's defaults."""

from __future__ import annotations

from contextlib import contextmanager

from reports.session import (
    LOOPBACK,
    SHUFFLE_PARTITIONS,
    SMALL_INPUT,
    SMALL_INPUT_JVM,
    report_session,
    session_settings,
)
from tests.spark_support import at, matrix_records, record, write_jsonl


def test_settings_bind_to_loopback_with_the_ui_off_and_utc():
    settings = session_settings("local[*]")
    assert settings["spark.driver.bindAddress"] == settings["spark.driver.host"] == LOOPBACK
    assert settings["spark.ui.enabled"] == "false"
    assert settings["spark.sql.session.timeZone"] == "UTC"
    assert "-Duser.timezone=UTC" in settings["spark.driver.extraJavaOptions"]
    assert int(settings["spark.sql.shuffle.partitions"]) == SHUFFLE_PARTITIONS <= 16
    assert settings["spark.python.sql.dataFrameDebugging.enabled"] == "false"


def test_the_small_profile_interprets_in_one_partition_on_the_quick_compiler_and_keeps_the_rest():
    default, small = session_settings("local[*]"), session_settings("local[*]", small=True)
    assert {key: small[key] for key in SMALL_INPUT} == SMALL_INPUT
    assert small["spark.sql.shuffle.partitions"] == "1" and small["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    assert all(option in small["spark.driver.extraJavaOptions"] for option in SMALL_INPUT_JVM)
    assert not any(option in default["spark.driver.extraJavaOptions"] for option in SMALL_INPUT_JVM)
    assert "spark.sql.codegen.factoryMode" not in default
    unchanged = set(default) - set(SMALL_INPUT) - {"spark.driver.extraJavaOptions"}
    assert {key: small[key] for key in unchanged} == {key: default[key] for key in unchanged}


def test_jvm_options_are_added_to_the_drivers():
    options = session_settings("local[*]", jvm_options=("-XX:SharedArchiveFile=/x.jsa",))
    assert options["spark.driver.extraJavaOptions"].endswith("-XX:SharedArchiveFile=/x.jsa")
    assert "-Duser.timezone=UTC" in options["spark.driver.extraJavaOptions"]


def test_the_running_session_has_them(spark):
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.bindAddress") == LOOPBACK
    assert conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.sparkContext.uiWebUrl is None


def test_report_session_reuses_the_active_session_and_leaves_it_running(spark):
    with report_session(small=True) as reused:
        assert reused is spark
    assert spark.range(3).count() == 3


@contextmanager
def _settings(spark, settings: dict[str, str]):
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            spark.conf.unset(key) if value is None else spark.conf.set(key, value)


def _every_table(spark, inputs: list[str]) -> dict[str, list]:
    from reports.job import compute_tables

    tables = compute_tables(spark, inputs)
    try:
        return {name: (table.schema, table.collect()) for name, table in tables.items()}
    finally:
        for table in tables.values():
            table.unpersist()


def test_the_small_profile_gives_every_table_exactly_as_the_defaults_do(spark, tmp_path):
    """Interpreted expressions, one partition and no adaptive plans are a matter of speed, never of content."""
    records = [
        *matrix_records(repeats=2),
        record("unified/change-streams::Test aggregate", "failed", "code 280 (ChangeStreamFatalError)", run_id="x"),
        record("unified/change-streams::Test aggregate", "passed", run_id="x", started_at=at(300)),
    ]
    inputs = [str(write_jsonl(tmp_path / "results.jsonl", records, ['{"torn": '])), str(tmp_path / "missing.jsonl")]
    default = _every_table(spark, inputs)
    with _settings(spark, SMALL_INPUT):
        assert spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
        small = _every_table(spark, inputs)
    assert spark.conf.get("spark.sql.codegen.factoryMode") != "NO_CODEGEN"
    assert small.keys() == default.keys()
    for name in default:
        assert small[name] == default[name], name
    assert default["cell_tests"][1] and default["input_problems"][1] and default["flakiness"][1]
