"""Every table the history adds is the same, row for row, in the local session, on a Spark Connect server and on a
standalone master with two workers (both started on 127.0.0.1 by the fixtures the report's own agreement tests
use: ``harness spark start``, and PySpark's ``bin/spark-class`` master and workers).

The other side runs in a separate process (tests/reports/history_tables_dump.py), opening its session as
``harness query`` does; the local side is this process's session over the same generated history.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.paths import REPO
from tests.reports import history_world as world
from tests.reports.history_tables_dump import COMPARED, dump
from tests.reports.test_cluster import cluster  # noqa: F401 - the standalone master and workers
from tests.reports.test_spark_connect import server  # noqa: F401 - the Spark Connect server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local(spark, tmp_path_factory):
    """The generated history and its tables computed in this process."""
    from reports.read import read_verdicts

    history = world.write_history(spark, tmp_path_factory.mktemp("history"))
    out = history / "local"
    dump(spark, read_verdicts(spark, [str(history / "verdicts")]), out)
    return history, out


def other_side(history, out, *session: str, env=None) -> None:  # type: ignore[no-untyped-def]
    done = subprocess.run(
        [sys.executable, "-m", "tests.reports.history_tables_dump", str(history), str(out), *session],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-5000:]


def assert_agree(local_out, other_out) -> None:  # type: ignore[no-untyped-def]
    for name in COMPARED:
        mine, theirs = (local_out / f"{name}.jsonl").read_text(), (other_out / f"{name}.jsonl").read_text()
        assert mine, f"{name} is empty: nothing would be compared"
        assert theirs == mine, name


def test_spark_connect_gives_the_local_tables(local, server, tmp_path):  # noqa: F811
    url, env, _ = server
    history, local_out = local
    other_side(history, tmp_path / "connect", "--remote", url, env=env)
    assert_agree(local_out, tmp_path / "connect")


def test_a_standalone_master_gives_the_local_tables(local, cluster, tmp_path):  # noqa: F811
    history, local_out = local
    other_side(history, tmp_path / "standalone", "--master", cluster)
    assert_agree(local_out, tmp_path / "standalone")
    for n in (1, 2):  # both workers ran executors
        assert any((tmp_path / f"worker-{n}").iterdir()), n
