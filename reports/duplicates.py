"""A run counts once however many inputs hold it.

The same records reach a report twice more often than one would think: a results file and its copy, the JSON
lines and the JUnit XML of one pytest session, a report's ``verdicts/`` given beside the results it was made
from. Each would double every count. A verdict is one record, known by :data:`KEY` (the run, the test, and when
it started: a test run twice in one run, as a campaign or a rerun may, started twice), and one verdict per key
is kept.

Finding duplicates by key means shuffling every verdict, which on a large history costs more than some whole
tables. So the pass that writes the verdicts also notes which inputs each run was read from (:func:`run_inputs`,
an observation on each kind of input before it is normalised, where its file is still known), and the verdicts
are rewritten without duplicates only when some run came from more than one input (:func:`runs_read_twice`).
Records repeated inside one file are not looked for: one harness process writes a run's records, to one file,
one line per test.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

#: What makes a verdict one record: the run, the test, and when it started.
KEY = ("run_id", "test_id", "started_at")


def run_inputs(run_id: Column, source: Column) -> Column:
    """An observation's aggregate over the rows of one kind of input: every (run, input) pair among them (about
    one per run, not one per verdict)."""
    return F.collect_set(F.struct(run_id.alias("run_id"), source.alias("input"))).alias("run_inputs")


def folder_of(path: Column) -> Column:
    """The folder of a part file: for the job's own Parquet, one input is a folder of many part files."""
    return F.regexp_replace(path, "/[^/]*$", "")


def runs_read_twice(pairs: Iterable[Any]) -> list[str | None]:
    """The runs :func:`run_inputs` saw in more than one input."""
    inputs = Counter(pair[0] for pair in pairs)
    return [run for run, count in inputs.items() if count > 1]
