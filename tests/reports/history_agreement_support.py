"""What the history's agreement tests share: the generated history with its tables computed in this process
(``history_local``), the other side's tables computed in a separate process, and their comparison."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.paths import REPO
from tests.reports import history_world as world
from tests.reports.history_tables_dump import COMPARED, dump


@pytest.fixture(scope="module")
def history_local(spark, tmp_path_factory):
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
