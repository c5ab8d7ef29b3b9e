"""reports.session: loopback only, no UI, UTC, modest shuffles; an existing session is reused, not stopped."""

from __future__ import annotations

from reports.session import LOOPBACK, SHUFFLE_PARTITIONS, report_session, session_settings


def test_settings_bind_to_loopback_with_the_ui_off_and_utc():
    settings = session_settings("local[*]")
    assert settings["spark.driver.bindAddress"] == settings["spark.driver.host"] == LOOPBACK
    assert settings["spark.ui.enabled"] == "false"
    assert settings["spark.sql.session.timeZone"] == "UTC"
    assert "-Duser.timezone=UTC" in settings["spark.driver.extraJavaOptions"]
    assert int(settings["spark.sql.shuffle.partitions"]) == SHUFFLE_PARTITIONS <= 16


def test_the_running_session_has_them(spark):
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.driver.bindAddress") == LOOPBACK
    assert conf.get("spark.ui.enabled") == "false"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.sparkContext.uiWebUrl is None


def test_report_session_reuses_the_active_session_and_leaves_it_running(spark):
    with report_session() as reused:
        assert reused is spark
    assert spark.range(3).count() == 3
