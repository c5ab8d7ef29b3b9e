"""How much a report will read, known before Spark starts: it picks the session's profile (:mod:`reports.session`).

The choice has to be made before the JVM starts (its compiler is a launch
option), so it is made from the inputs' sizes on disk, not from counted
rows. Everything the job reads counts: the inputs, the ``--baseline`` runs
and the ``--append-to`` history (a small night over a long history is a large
job). Plain Python: it only lists files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from reports.discover import InputFiles

MIB = 2**20
#: Up to this much JSON lines and JUnit XML (about 45,000 verdicts at ~1.5 KiB each) is a small input:
#: measured on this machine, the small profile is faster at 4,000 verdicts (12.5 s against 20.2 s) and still at
#: 30,000 (18.5 s against 27.0 s); benchmarks/RESULTS-report.md.
SMALL_TEXT_BYTES = 64 * MIB
#: Up to this much Parquet (normalised verdicts, some tens of bytes each: a few hundred thousand verdicts).
SMALL_PARQUET_BYTES = 4 * MIB


@dataclass(frozen=True)
class InputSize:
    text_bytes: int
    parquet_bytes: int

    @property
    def small(self) -> bool:
        return self.text_bytes <= SMALL_TEXT_BYTES and self.parquet_bytes <= SMALL_PARQUET_BYTES

    def __add__(self, other: InputSize) -> InputSize:
        return InputSize(self.text_bytes + other.text_bytes, self.parquet_bytes + other.parquet_bytes)


def input_size(found: InputFiles) -> InputSize:
    """The bytes of every discovered input, by kind."""
    text = sum(_size(Path(path)) for path in found.jsonl + found.junit)
    return InputSize(text, sum(directory_bytes(Path(path)) for path in found.parquet))


def directory_bytes(directory: Path) -> int:
    """Every file's size under ``directory`` (0 when it does not exist: an --append-to history not yet begun)."""
    total = 0
    for root, _, files in os.walk(directory):
        total += sum(_size(Path(root) / name) for name in files)
    return total


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone since it was listed: the reader names it
        return 0
