"""What ``harness run`` runs, as one typed object: the run options and the test selection.

``harness run`` reads it from its command line (:meth:`RunJob.from_namespace`); ``harness certify`` builds it
directly (a strict main job with a results file of its own) and hands it to the same function,
:func:`harness.app.cli.run_job`, so no front end rebuilds a command line to be parsed again.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from harness.engine.run import RunOptions


@dataclass
class RunJob:
    """One run: its options (target, driver, results file, strictness...) and which tests it runs."""

    options: RunOptions
    #: The ``--specs`` roots as given (a path or a source to fetch); the run resolves them to paths in place.
    specs: list[str | Path] = field(default_factory=list)
    #: ``--suite``: one suite name or several, comma-separated (``all``: every suite that belongs in it).
    suite: str = "spec"
    #: ``-k``: only tests whose id contains this text.
    keyword: str | None = None
    jobs: int = 1
    #: With ``jobs`` and a target the harness does not start: another deployment per extra worker.
    worker_targets: list[str] = field(default_factory=list)
    #: No per-test lines, only failures and the summary.
    quiet: bool = False

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> RunJob:
        """``harness run``'s parsed command line."""
        from harness.app.options import from_namespace

        return cls(
            options=from_namespace(args),
            specs=list(args.specs or []),
            suite=args.suite,
            keyword=args.keyword,
            jobs=args.jobs,
            worker_targets=list(args.worker_targets),
            quiet=args.quiet,
        )
