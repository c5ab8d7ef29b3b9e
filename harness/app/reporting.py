"""Terminal output: progress per test, failure details, a summary table, the exit status."""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from typing import Any, TextIO

OUTCOMES = ("passed", "failed", "error", "skipped")
_LABEL = {"passed": "PASS", "failed": "FAIL", "error": "ERROR", "skipped": "SKIP"}


class ConsoleReporter:
    def __init__(self, total: int, quiet: bool = False, stream: TextIO = sys.stdout) -> None:
        self.total = total
        self.quiet = quiet
        self.stream = stream
        self.results: list[Any] = []
        self.expectations: Any = None

    def _print(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def start(self, run: Any) -> None:
        self.expectations = run.expectations
        info = run.target.info
        self._print(f"harness run {run.run_id}: {self.total} test(s) on {info.name} "
                    f"({info.kind}, server {info.version}, {info.topology}) with {run.driver.name} {run.driver.version}")
        self._print(f"expected outcomes: {run.expectations.source}")

    def report(self, result: Any) -> None:
        self.results.append(result)
        n = len(self.results)
        known = "" if result.classification.expected or result.outcome == "passed" else "  [UNEXPECTED]"
        if result.classification.kind.startswith("known"):
            known = "  [known]"
        if result.classification.kind == "unexpected-pass":
            known = "  [UNEXPECTED PASS]"
        show_line = not self.quiet or not result.classification.expected
        if show_line:
            self._print(f"[{n:>3}/{self.total}] {_LABEL[result.outcome]:<5} {result.test_id} "
                        f"({result.duration_s:.2f}s){known}")
        if result.outcome in ("failed", "error") and (not self.quiet or not result.classification.expected):
            for line in result.message.splitlines():
                self._print(f"        {line}")
        elif result.outcome == "skipped" and not self.quiet:
            self._print(f"        skipped: {result.message}")

    def finish(self) -> int:
        by_file: dict[str, Counter] = defaultdict(Counter)
        for result in self.results:
            by_file[result.file][result.outcome] += 1
        width = max([len("file")] + [len(f) for f in by_file])
        self._print()
        self._print(f"{'file'.ljust(width)}  " + "  ".join(f"{o:>7}" for o in OUTCOMES))
        totals: Counter = Counter()
        for file, counts in sorted(by_file.items()):
            totals.update(counts)
            self._print(f"{file.ljust(width)}  " + "  ".join(f"{counts[o]:>7}" for o in OUTCOMES))
        self._print(f"{'total'.ljust(width)}  " + "  ".join(f"{totals[o]:>7}" for o in OUTCOMES))
        unexpected = [r for r in self.results if not r.classification.expected]
        known = sum(1 for r in self.results if r.classification.kind.startswith("known"))
        self._print()
        self._print(f"{len(self.results)} tests: {totals['passed']} passed, {totals['failed']} failed, "
                    f"{totals['error']} errors, {totals['skipped']} skipped; {known} known deviation(s), "
                    f"{len(unexpected)} unexpected")
        for result in unexpected:
            self._print(f"  UNEXPECTED {result.classification.kind}: {result.test_id}"
                        + (f" ({result.classification.reason})" if result.classification.reason else ""))
        stale = self.expectations.unmatched([r.test_id for r in self.results]) if self.expectations else []
        for entry in stale:
            self._print(f"  note: expected-outcomes entry matched no test in this run: {entry.pattern!r}")
        return 1 if unexpected else 0
