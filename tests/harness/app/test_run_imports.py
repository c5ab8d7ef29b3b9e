"""``harness run`` never imports PySpark (nor the report or matrix machinery): a run stays light and fast.

The ``report`` and ``matrix`` commands are registered on the same parser, so
this guards against a module-level import creeping into what ``run`` loads.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.harness.app.test_cli import PASSING
from tests.helpers import LEGACY_HEADER

_PROBE = """
import json, sys
from harness.app.cli import main
status = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j', 'pandas', 'pyarrow', 'matplotlib'))
print(json.dumps({'status': status, 'heavy': heavy}))
"""


def test_harness_run_loads_no_pyspark(tmp_path):
    spec = tmp_path / "light.yml"
    spec.write_text(LEGACY_HEADER + PASSING)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "run", "--specs", str(spec), "--expected", "none", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome["status"] == 0
    # the report command's parser is built, but nothing that pulls in the JVM or dataframes is imported
    assert outcome["heavy"] == []
