"""Every table the history adds is the same, row for row, in the local session and on a standalone master with two
workers (started on 127.0.0.1 by the fixture the report's own agreement test uses: PySpark's ``bin/spark-class``
master and workers); tests/reports/test_spark_connect.py holds them equal on a Spark Connect server, with its
module's one server.

The other side runs in a separate process (tests/reports/history_tables_dump.py), opening its session as
``harness query`` does; the local side is this process's session over the same generated history.
"""

from __future__ import annotations

import pytest

from tests.reports.history_agreement_support import assert_agree, history_local, other_side  # noqa: F401
from tests.reports.test_cluster import cluster  # noqa: F401 - the standalone master and workers

pytestmark = pytest.mark.slow


def test_a_standalone_master_gives_the_local_tables(history_local, cluster, tmp_path):  # noqa: F811
    history, local_out = history_local
    other_side(history, tmp_path / "standalone", "--master", cluster)
    assert_agree(local_out, tmp_path / "standalone")
    for n in (1, 2):  # both workers ran executors
        assert any((tmp_path / f"worker-{n}").iterdir()), n
