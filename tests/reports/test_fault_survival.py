"""reports.fault_survival: campaign records summed per cell; other formats left out."""

from __future__ import annotations

from tests.spark_support import record, verdicts_frame


def campaign(outcome, faults, resumes, anomalies, disallowed, driver="4.9.0", run_id="c"):
    return record(
        "campaign/campaign::seed=1 events=500",
        outcome,
        "",
        fmt="campaign",
        driver_version=driver,
        run_id=run_id,
        details={
            "events": 500,
            "resumes": resumes,
            "disallowed_errors": disallowed,
            "faults": [{"kind": "restart"}] * faults,
            "anomalies": [{"kind": "gap"}] * anomalies,
        },
    )


def test_campaigns_are_summed_per_cell(spark):
    from reports.fault_survival import fault_survival

    recs = [
        campaign("passed", 5, 4, 0, 0, run_id="c1"),
        campaign("failed", 3, 1, 2, 1, run_id="c2"),
        campaign("passed", 7, 7, 0, 0, driver="4.10.0", run_id="c3"),
        record("unified/x::not a campaign"),
    ]
    got = [
        (
            r["cell"].split(" ")[1],
            r["campaigns"],
            r["passed"],
            r["faults_injected"],
            r["resumes"],
            r["events"],
            r["anomalies"],
            r["disallowed_errors"],
        )
        for r in fault_survival(verdicts_frame(spark, recs)).collect()
    ]
    assert got == [("4.10.0", 1, 1, 7, 7, 500, 0, 0), ("4.9.0", 2, 1, 8, 5, 1000, 2, 1)]


def test_with_the_version_table_cells_come_in_version_order_like_the_cells_table(spark):
    from reports.fault_survival import fault_survival
    from reports.versions import version_dimension

    recs = [campaign("passed", 1, 1, 0, 0, driver=driver, run_id=driver) for driver in ("4.10.0", "4.9.0", "4.16.0")]
    verdicts = verdicts_frame(spark, recs)
    versions = version_dimension(spark, verdicts, ["driver_version", "target_version"])
    got = [r["cell"].split(" ")[1] for r in fault_survival(verdicts, versions).collect()]
    assert got == ["4.9.0", "4.10.0", "4.16.0"]
