"""Write every history view as sorted JSON lines, in a session of its own: the other side of an agreement test.

    python -m tests.reports.history_tables_dump HISTORY OUT (--master URL | --remote sc://HOST:PORT)

Run in a separate process (one SparkContext, or one Spark Connect client, per process), as a user runs
``harness query``: the session is opened by the commands' own :func:`reports.history_source.history_session`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

#: The views an agreement test compares: every table the history adds.
COMPARED = ("timelines", "first_changes", "flip_flops", "rule_scores", "exclusive_failures", "causes")


def sorted_lines(frame) -> list[str]:  # type: ignore[no-untyped-def]
    """A table's rows as JSON text, sorted (a table's order is its own business; its rows must agree)."""
    return sorted(json.dumps(row, default=str, sort_keys=True) for row in frame.toArrow().to_pylist())


def dump(spark, verdicts, out: Path) -> None:  # type: ignore[no-untyped-def]
    from reports.query_views import VIEWS
    from reports.timelines import FLIP_FLOP_DAYS

    out.mkdir(parents=True, exist_ok=True)
    for name in COMPARED:
        (out / f"{name}.jsonl").write_text("\n".join(sorted_lines(VIEWS[name](spark, verdicts, FLIP_FLOP_DAYS))))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("history", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--master", default=None)
    parser.add_argument("--remote", default=None)
    args = parser.parse_args()
    from reports.history_source import history_session

    state = Path(os.environ["HARNESS_CACHE_DIR"]) / "spark-connect" if "HARNESS_CACHE_DIR" in os.environ else None
    with history_session(args, state) as (spark, verdicts):
        dump(spark, verdicts, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
