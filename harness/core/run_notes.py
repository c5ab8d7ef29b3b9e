"""What a run noticed besides its verdicts, and whether that fails it (``--strict``).

Some findings are no test's verdict: an expected-outcomes entry that matched no test, pinned tests
that produced no result, a unified file loaded without its JSON schema, a plug-in that could not be
installed, a spec file no pin knows. A plain run says them (``note:``) and is judged by its verdicts
alone. A strict run (``--strict``: what CI and certifications use) also fails, exit 1, on every kind
:data:`NOTE_KINDS` marks, and says so with the same words. A file no pin knows never fails a run: a
newer corpus is run and said to be unpinned (docs/pins.md).
"""

from __future__ import annotations

import fnmatch
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from harness.core.expectations import RULELESS_KINDS

#: Every kind of note -> whether it fails a strict run.
NOTE_KINDS: dict[str, bool] = {
    "plugin-not-installed": True,
    "no-schema": True,
    #: an entry naming a file the run loaded, matching none of its tests; or a file no corpus or pin knows
    "stale-expectation": True,
    #: tests of a pinned file that the run selected and that produced no result
    "pinned-test-missing": True,
    #: an entry of a --specs folder that is not a regular file (a FIFO, a device, a link to one): never opened
    "spec-entry-not-read": True,
    #: an entry for a test the run did not select (-k), or for a pinned file it did not load (another --specs)
    "expectation-not-selected": False,
    #: an entry whose tests all ran here as skips or were cut short before every check (not exercised)
    "expectation-not-exercised": False,
    #: a spec file no pin knows, by content or by path (a newer corpus): run, its test count unchecked
    "unpinned": False,
    #: a spec file at a pinned path with other content (a newer corpus): run as unpinned
    "pin-changed": False,
    #: the pair's expected outcomes adjust how the driver connects (a reproduced target fault; recorded)
    "run-adjusted": False,
    #: a read-ahead entry (docs/causes.md) that explained nothing: whether a push mode's getMore goes out before the
    #: test's fail point, write or count is the driver's timing, so a run may not meet it; said, never a failure
    "read-ahead-not-met": False,
    #: an entry marked ``sometimes`` (its cause shows only after some server history, which the order tests ran in
    #: decides) that explained nothing: said with the entry's reason, never a failure
    "sometimes-not-met": False,
}

#: Kinds of note the run adds itself (the front ends print the others as they add them).
RUN_SAID = ("run-adjusted",)

#: The words of an expected-outcomes entry that explained no cause (a plain run's note, a strict run's failure).
UNMATCHED_ENTRY = "expected-outcomes entry explained no cause in this run: {ref} ({rule}; {signature}{tests})"


@dataclass(frozen=True)
class Note:
    kind: str
    words: str

    @property
    def fails_strict(self) -> bool:
        return NOTE_KINDS[self.kind]


@dataclass
class RunNotes:
    """The run's notes; :meth:`close` adds the end-of-run ones once every result is in."""

    strict: bool = False
    notes: list[Note] = field(default_factory=list)
    #: The test ids the run loaded, before ``-k`` narrowed them; None when not known (then every entry that
    #: matched no result is stale).
    loaded: list[str] | None = None
    #: For each file whose pin matched: how many of its tests the run selected (each must produce a result).
    pinned: dict[str, int] = field(default_factory=dict)
    #: The file stems every pin manifest knows: an entry for one of them that the run did not load is another
    #: corpus's (a note); an entry for a file neither loaded nor pinned names no file at all (stale).
    pinned_stems: set[str] = field(default_factory=set)
    #: The files of the suites the run did not select (``check/server-checks`` of ``--suite checks`` when the run
    #: is ``--suite spec,prose``): an entry for one of them is another suite's (a note), not stale.
    unselected_files: set[str] = field(default_factory=set)
    _closed: bool = field(default=False, init=False, repr=False)

    def add(self, kind: str, words: str) -> None:
        if kind not in NOTE_KINDS:
            raise ValueError(f"unknown note kind {kind!r}; known: {', '.join(NOTE_KINDS)}")
        self.notes.append(Note(kind, words))

    def close(
        self,
        expectations: Any,
        produced: list[tuple[str, str]],
        used: set[str] | frozenset[str] = frozenset(),
        skipped: set[str] | frozenset[str] = frozenset(),
    ) -> list[Note]:
        """Add the end-of-run notes and return them. ``produced``: each result's (test id, file); ``used``: the
        refs of the expected-outcomes entries that explained a cause; ``skipped``: the ids of the tests that did not
        reach every check (skipped, or cut short by a cause that broke their flow: docs/causes.md), where an entry's
        cause may not have had its chance to show."""
        if self._closed:
            return []
        self._closed = True
        start = len(self.notes)
        ids = [test_id for test_id, _ in produced]
        for entry in expectations.unused(set(used)) if expectations is not None else []:
            tests = f"; tests {list(entry.tests)}" if entry.tests else ""
            words = UNMATCHED_ENTRY.format(
                ref=entry.ref, rule=entry.rule, signature=entry.signature.describe(), tests=tests
            )
            if entry.kind in RULELESS_KINDS:
                kind = "read-ahead-not-met"
            elif entry.sometimes:
                kind, words = "sometimes-not-met", f"{words}; it shows only sometimes: {entry.sometimes}"
            else:
                kind = self._unused_kind(entry.tests, ids, set(skipped))
            self.add(kind, words)
        results = Counter(file for _, file in produced)
        for file, selected in self.pinned.items():
            if results[file] < selected:
                self.add(
                    "pinned-test-missing",
                    f"{file}: {selected - results[file]} of the {selected} pinned "
                    "test(s) the run selected produced no result",
                )
        return self.notes[start:]

    def said_by_the_run(self) -> list[Note]:
        """Notes the run itself added while starting (a front end prints them with the closing notes): the
        adjustments of a target and driver pair."""
        return [note for note in self.notes if note.kind in RUN_SAID]

    def failures(self) -> list[Note]:
        """The notes that fail this run: none unless it is strict."""
        return [note for note in self.notes if note.fails_strict] if self.strict else []

    def _unused_kind(self, tests: tuple[str, ...], ids: list[str], skipped: set[str]) -> str:
        """Why an entry explained nothing: stale (its tests ran through, or, with no tests named, the whole
        selection ran, and the cause never showed), not exercised (its tests were skipped or cut short), or not
        selected."""
        if not tests:
            whole = self.loaded is None or (set(self.loaded) <= set(ids) and not self.unselected_files)
            return "stale-expectation" if whole else "expectation-not-selected"
        ran = [t for t in ids if any(t == p or fnmatch.fnmatchcase(t, p) for p in tests)]
        if ran:
            return "stale-expectation" if any(t not in skipped for t in ran) else "expectation-not-exercised"
        return "stale-expectation" if all(self._is_stale(p) for p in tests) else "expectation-not-selected"

    def _is_stale(self, pattern: str) -> bool:
        """Stale: no loaded test matches it, and its file (the part before ``::``) is one the run loaded, or one
        that no pin knows either (deleted, or misspelt). A pattern with no file part may match tests of any file:
        stale only when the run loaded every pinned file and every suite."""
        if self.loaded is None:
            return True
        if any(pattern == test_id or fnmatch.fnmatchcase(test_id, pattern) for test_id in self.loaded):
            return False  # loaded, then not selected (-k)
        if "::" not in pattern:  # a test-name pattern over every file (*RULE-ID*): stale only when all were loaded
            loaded_stems = {test_id.split("::", 1)[0].split("/", 1)[-1] for test_id in self.loaded}
            return not self.unselected_files and self.pinned_stems <= loaded_stems
        file_part = pattern.split("::", 1)[0]
        if any(fnmatch.fnmatchcase(test_id.split("::", 1)[0], file_part) for test_id in self.loaded):
            return True
        if any(fnmatch.fnmatchcase(file, file_part) for file in self.unselected_files):
            return False
        stem = file_part.split("/", 1)[-1]  # format/stem
        return not any(fnmatch.fnmatchcase(known, stem) for known in self.pinned_stems)
