"""Terminal output: progress per test, a live line while tests run, failure details, a summary, the exit status.

On a terminal, a live line names the test(s) in progress and how long each
has been running, redrawn twice a second, so a slow test is never silent;
elsewhere (CI logs, pipes) output is plain lines, one per finished test.
The summary ends with the slowest tests.

Every line goes out through :meth:`ConsoleReporter._print`, which shows the control characters of what it
prints instead of sending them (:func:`harness.core.terminal_text.printable`): test ids, descriptions and
failure messages come from spec files and servers, and must not retitle the window or erase a ``FAIL`` line.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
import time
from collections import Counter, defaultdict
from typing import Any, TextIO

from harness.core.expectations import UNEXPECTED_PASS
from harness.core.run_notes import RunNotes
from harness.core.terminal_text import printable
from harness.core.verdicts import ERROR, FAILED, OUTCOMES, PASSED, SKIPPED
from harness.record.outcomes import FLAKY

_LABEL = {PASSED: "PASS", FAILED: "FAIL", ERROR: "ERROR", SKIPPED: "SKIP", FLAKY: "FLAKY"}


#: How many of the slowest tests the summary names.
SLOWEST = 5


class ConsoleReporter:
    def __init__(
        self,
        total: int,
        quiet: bool = False,
        stream: TextIO | None = None,
        live: bool | None = None,
        notes: RunNotes | None = None,
    ) -> None:
        self.total = total
        #: The run's notes: said at the end, and under ``--strict`` the ones that fail it.
        self.notes = notes or RunNotes()
        self.quiet = quiet
        self.stream = stream or sys.stdout
        self.results: list[Any] = []
        self.expectations: Any = None
        #: The live line: on by default only on a terminal.
        self.live = self.stream.isatty() if live is None else live
        self._running: dict[str, float] = {}
        self._lock = threading.RLock()
        self._drawn = False
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def _print(self, text: str = "", *, block: bool = False) -> None:
        """One line, its control characters shown (``block``: a line of a multi-line message, tabs kept)."""
        with self._lock:
            self._clear_live()
            print(printable(text, block=block), file=self.stream, flush=True)

    def start(self, run: Any, workers: int = 1) -> None:
        self.expectations = run.expectations
        info = run.target.info
        on = f" in {workers} workers (one target each)" if workers > 1 else ""
        self._print(
            f"harness run {run.run_id}: {self.total} test(s) on {info.name} "
            f"({info.kind}, server {info.version}, {info.topology}) with {run.driver.name} {run.driver.version}" + on
        )
        self._print(f"expected outcomes: {run.expectations.source}")
        if self.live:
            self._ticker = threading.Thread(target=self._tick, name="harness-live-line", daemon=True)
            self._ticker.start()

    # -- the live line --------------------------------------------------------------
    def begin(self, test_id: str) -> None:
        """A test started (on some worker): it shows on the live line until its result comes."""
        with self._lock:
            self._running[test_id] = time.monotonic()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self._draw_live()

    def _draw_live(self) -> None:
        with self._lock:
            if not self._running:
                return
            now = time.monotonic()
            parts = [
                f"{test_id} ({now - began:.1f}s)"
                for test_id, began in sorted(self._running.items(), key=lambda item: item[1])
            ]
            width = shutil.get_terminal_size((100, 20)).columns - 1
            text = f"[{len(self.results):>3}/{self.total}] running: " + ", ".join(parts)
            self.stream.write("\r\033[K" + printable(text)[:width])
            self.stream.flush()
            self._drawn = True

    def _clear_live(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self._drawn = False

    def stop_live(self) -> None:
        """No more live line: the run ended, or was stopped (a results file that cannot be written) without a
        summary; the line on screen is cleared so the last message stands alone."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2)
            self._ticker = None
        with self._lock, contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP, a closed pipe)
            self._clear_live()

    def report(self, result: Any) -> None:
        with self._lock:
            self._running.pop(result.test_id, None)
            self._report(result)

    def _report(self, result: Any) -> None:
        self.results.append(result)
        n = len(self.results)
        known = "" if result.classification.expected or result.outcome == PASSED else "  [UNEXPECTED]"
        if result.classification.known:
            known = "  [known]"
        if result.classification.kind == UNEXPECTED_PASS:
            known = "  [UNEXPECTED PASS]"
        if result.classification.recommendation_not_followed:
            known = "  [SHOULD not followed]"
        show_line = not self.quiet or not result.classification.expected
        if show_line:
            self._print(
                f"[{n:>3}/{self.total}] {_LABEL[result.outcome]:<5} {result.test_id} ({result.duration_s:.2f}s){known}"
            )
        if result.outcome in (FAILED, ERROR, FLAKY) and (not self.quiet or not result.classification.expected):
            for line in _lines(result.message):
                self._print(f"        {line}", block=True)
        elif result.outcome == SKIPPED and not self.quiet:
            self._print(f"        skipped: {result.message}")

    def _known_by_cause(self) -> None:
        """The "known, by cause" table: each expected-outcomes entry that explained causes, how many and in how
        many tests, with its kind and rule (docs/causes.md)."""
        causes: Counter = Counter()
        tests: dict[str, set[str]] = defaultdict(set)
        for result in self.results:
            for cause in result.classification.causes:
                if cause.known:
                    causes[cause.known] += 1
                    tests[cause.known].add(result.test_id)
        if not causes:
            return
        entries = {entry.ref: entry for entry in (self.expectations.known if self.expectations else [])}
        rows = [
            (ref, entries[ref].kind if ref in entries else "?", entries[ref].rule if ref in entries else "?")
            for ref in sorted(causes)
        ]
        width = max(len("known, by cause"), *(len(ref) for ref, _, _ in rows))
        self._print()
        self._print(f"{'known, by cause'.ljust(width)}  {'kind':<22}  {'rule':<28}  {'causes':>6}  {'tests':>5}")
        for ref, kind, rule in rows:
            self._print(f"{ref.ljust(width)}  {kind:<22}  {rule:<28}  {causes[ref]:>6}  {len(tests[ref]):>5}")

    def _recommendations(self) -> None:
        """The SHOULD-level findings: counted on their own line, each with its rule ids; they never fail the run
        (a check stricter than the spec's MUST would be a false alarm), not even under ``--strict``."""
        not_followed = [r for r in self.results if r.classification.recommendation_not_followed]
        if not not_followed:
            return
        self._print(f"{len(not_followed)} SHOULD-level recommendations not followed")
        for result in not_followed:
            self._print(f"  SHOULD not followed: {result.test_id} ({result.classification.reason})")

    def finish(self, interrupted: str = "") -> int:
        """The summary; ``interrupted`` (``interrupted by SIGTERM``) says the run was stopped before its end."""
        self.stop_live()
        by_file: dict[str, Counter] = defaultdict(Counter)
        for result in self.results:
            by_file[result.file][result.outcome] += 1
        # A test run more than once that both failed and passed is flaky (harness.record.outcomes), never passed.
        columns = (*OUTCOMES, FLAKY) if any(r.outcome == FLAKY for r in self.results) else OUTCOMES
        width = max([len("file")] + [len(f) for f in by_file])
        self._print()
        self._print(f"{'file'.ljust(width)}  " + "  ".join(f"{o:>7}" for o in columns))
        totals: Counter = Counter()
        for file, counts in sorted(by_file.items()):
            totals.update(counts)
            self._print(f"{file.ljust(width)}  " + "  ".join(f"{counts[o]:>7}" for o in columns))
        self._print(f"{'total'.ljust(width)}  " + "  ".join(f"{totals[o]:>7}" for o in columns))
        unexpected = [r for r in self.results if not r.classification.expected]
        known = sum(1 for r in self.results if r.classification.known)
        self._print()
        if interrupted:
            self._print(f"{interrupted}: {self.total - len(self.results)} of {self.total} test(s) not run")
        self._print(
            f"{len(self.results)} tests: {totals[PASSED]} passed, {totals[FAILED]} failed, "
            f"{totals[ERROR]} errors, {totals[SKIPPED]} skipped"
            + (f", {totals[FLAKY]} flaky" if FLAKY in columns else "")
            + f"; {known} known deviation(s), "
            f"{len(unexpected)} unexpected"
        )
        for result in sorted(unexpected, key=lambda r: r.test_id):  # the same order however the tests were run
            kind = result.classification.kind
            self._print(
                f"  UNEXPECTED {f'{FLAKY} ({kind})' if result.outcome == FLAKY else kind}: {result.test_id}"
                + (f" ({result.classification.reason})" if result.classification.reason else "")
            )
        self._known_by_cause()
        self._recommendations()
        slowest = sorted(self.results, key=lambda r: -r.duration_s)[:SLOWEST]
        if slowest:
            self._print("slowest: " + ", ".join(f"{r.test_id} ({r.duration_s:.2f}s)" for r in slowest))
        closing = self.notes.said_by_the_run() + self.notes.close(
            self.expectations,
            [(r.test_id, r.file) for r in self.results],
            {ref for r in self.results for ref in r.classification.entries},
            {r.test_id for r in self.results if r.outcome == SKIPPED or r.record.get("not_reached")},
        )
        failing = self.notes.failures()
        for note in closing:
            if note not in failing:
                self._print(f"  note: {note.words}")
        for note in failing:
            self._print(f"  STRICT: {note.words}")
        if failing:
            self._print(f"--strict: {len(failing)} note(s) fail this run")
        return 1 if unexpected or failing else 0


def _lines(message: str) -> list[str]:
    """A message's lines, split at newlines only: a carriage return or another break inside a line is shown
    (:func:`printable`), not obeyed, so it cannot hide the text before it."""
    return message.rstrip("\n").split("\n") if message else []
