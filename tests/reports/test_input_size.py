"""reports.input_size and the CLI's reading of it: what a report reads, counted before Spark starts."""

from __future__ import annotations

import argparse
from pathlib import Path

from reports import input_size as sizes
from reports.cli import reads
from reports.discover import VERDICTS_MARKER, discover_inputs


def _file(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def _verdicts(folder: Path, size: int) -> Path:
    _file(folder / "part-0.parquet", size)
    (folder / VERDICTS_MARKER).write_text("")
    return folder


def _args(inputs: list[Path], baseline: list[Path] | None = None, append_to: Path | None = None):
    return argparse.Namespace(
        inputs=[str(p) for p in inputs], baseline=[str(p) for p in baseline or []] or None, append_to=append_to
    )


def test_sizes_by_kind(tmp_path):
    found = discover_inputs(
        [
            str(_file(tmp_path / "a.jsonl", 100)),
            str(_file(tmp_path / "b.xml", 50)),
            str(_verdicts(tmp_path / "v", 7)),
            str(tmp_path / "gone.jsonl"),
        ]
    )
    assert sizes.input_size(found) == sizes.InputSize(150, 7)
    assert sizes.directory_bytes(tmp_path / "not-there") == 0


def test_small_up_to_each_limit():
    assert sizes.InputSize(sizes.SMALL_TEXT_BYTES, sizes.SMALL_PARQUET_BYTES).small
    assert not sizes.InputSize(sizes.SMALL_TEXT_BYTES + 1, 0).small
    assert not sizes.InputSize(0, sizes.SMALL_PARQUET_BYTES + 1).small


def test_a_small_night_over_a_large_history_or_baseline_is_a_large_report(tmp_path, monkeypatch):
    monkeypatch.setattr(sizes, "SMALL_TEXT_BYTES", 1000)
    monkeypatch.setattr(sizes, "SMALL_PARQUET_BYTES", 1000)
    night = _file(tmp_path / "night.jsonl", 600)
    found = discover_inputs([str(night)])
    assert reads(_args([night]), found).small
    assert reads(_args([night], append_to=tmp_path / "new-history"), found).small  # not begun: nothing to read
    history = tmp_path / "history"
    _verdicts(history / "verdicts", 2000)
    assert reads(_args([night], append_to=history), found) == sizes.InputSize(600, 2000)
    assert not reads(_args([night], append_to=history), found).small
    old = _file(tmp_path / "old" / "r.jsonl", 600)
    assert reads(_args([night], baseline=[old.parent]), found) == sizes.InputSize(1200, 0)
    assert not reads(_args([night], baseline=[old.parent]), found).small
