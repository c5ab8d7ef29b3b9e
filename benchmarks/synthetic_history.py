"""Write a synthetic history straight to Parquet: N normalised verdicts, as ``harness report --append-to`` keeps them.

    python benchmarks/synthetic_history.py --rows 100000000 --seed 7 --out /tmp/history-100m
    harness report NIGHT.jsonl --append-to /tmp/history-100m --out /tmp/report

100M records as JSON lines would be ~140 GiB, more than this disk holds, so
the history is never written as JSON: the nights come from the same
generator as the JSON-lines benchmark (:class:`synthetic_results.NightWriter`:
the same records, byte for byte), a chunk of nights at a time, are parsed in
memory by pyarrow's JSON reader (vectorised C++), normalised with vectorised
pandas/pyarrow expressions into the verdict schema (``reports.schema.VERDICT``),
and written as one Parquet file per chunk under ``OUT/verdicts/``, with the
verdicts marker: the layout ``--append-to OUT`` appends to and reads. Memory
stays flat (one chunk of ~500k rows, ~0.7 GiB of JSON, per worker at a time).

Making a record and parsing it back costs ~20 us a row here, so 100M distinct
rows would take the better part of an hour on two cores. ``--distinct-rows D``
generates the first D rows (10M: a year of nightly matrices) and fills the
rest with copies of those nights moved later in time: each copy's runs get
their own ids (``run_id`` and the matrix id with a ``~cN`` suffix) and start
``N`` spans of D rows' nights later, everything else as generated. The
tables then see more runs, more repeats and the same planted behaviours;
``planted_truth.py`` still holds, and the copy costs a Parquet read and write.

The normalisation follows ``reports.normalise`` column by column (the cell's
name, the spec file, the error code, the message pattern with the same
regular expressions); ``tests/benchmarks/test_bench_report_smoke.py`` checks
that a night written here equals the job's own normalisation of the same
night's JSON lines, row for row.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from io import BytesIO
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pyarrow.parquet as pq

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.pandas_baseline import message_pattern
from benchmarks.synthetic_results import NightWriter, rows_per_night
from reports.discover import VERDICTS_MARKER
from reports.normalise import ERROR_CODE
from reports.outcomes import FAILING

MANIFEST = "_synthetic_history.json"
PART = "part-{:05d}.parquet"
_ERROR_CODE = re.compile(ERROR_CODE, re.ASCII)
#: Nights per Parquet file: ~30k rows a night, so about 500k rows a file (and a worker's memory).
NIGHTS_PER_PART = 17

_S = pa.string()
_L = pa.int64()
#: ``reports.schema.CAUSE``: the fields of a cause the reports read, in that order.
_CAUSE = pa.struct([("clause", _S), ("step", _S), ("path", _S), ("fact", _S), ("rules", pa.list_(_S)), ("known", _S)])
#: The record fields the verdict is made of (unknown fields are skipped by the reader).
READ_SCHEMA = pa.schema(
    [
        ("record", _S),
        ("run_id", _S),
        ("format", _S),
        ("test_id", _S),
        ("test", _S),
        ("outcome", _S),
        ("message", _S),
        ("started_at", _S),
        ("duration_s", pa.float64()),
        ("failpoints", _S),
        ("rules", pa.list_(_S)),
        (
            "target",
            pa.struct(
                [
                    ("kind", _S),
                    ("name", _S),
                    ("version", _S),
                    ("topology", _S),
                    (
                        "details",
                        pa.struct([("package_version", _S), ("network_faults", pa.struct([("toxiproxy", _S)]))]),
                    ),
                ]
            ),
        ),
        ("driver", pa.struct([("name", _S), ("version", _S)])),
        ("labels", pa.struct([("matrix", _S), ("cell", _S), ("repeat", _S)])),
        ("expectation", pa.struct([("expected", pa.bool_()), ("kind", _S), ("reason", _S)])),
        ("causes", pa.list_(_CAUSE)),
        ("not_reached", pa.list_(_S)),
        (
            "details",
            pa.struct(
                [
                    ("events", _L),
                    ("resumes", _L),
                    ("disallowed_errors", _L),
                    ("faults", pa.list_(pa.struct([("index", _L)]))),
                    ("anomalies", pa.list_(pa.struct([("kind", _S)]))),
                ]
            ),
        ),
    ]
)


def verdict_arrow_schema() -> pa.Schema:
    """``reports.schema.VERDICT`` as an Arrow schema (timestamps in UTC, as Spark reads them back)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from reports.schema import VERDICT

    return to_arrow_schema(VERDICT, timezone="UTC")


def verdicts_from_json(lines: bytes | memoryview, schema: pa.Schema) -> pa.Table:
    """JSON lines of ``cs-harness.result/1`` records as normalised verdicts (``reports.normalise``'s columns).

    Vectorised with pyarrow compute; only the failures' messages (a few percent) go through Python's
    regular expressions, to make their error code and pattern.
    """
    options = pj.ParseOptions(explicit_schema=READ_SCHEMA, unexpected_field_behavior="ignore")
    raw = pj.read_json(pa.BufferReader(lines), parse_options=options, read_options=pj.ReadOptions(block_size=64 << 20))
    r = {name: raw.column(name) for name in raw.column_names}
    flat = raw.flatten().flatten().flatten()
    f = {name: flat.column(name) for name in flat.column_names}
    is_campaign = pc.equal(r["format"], "campaign")
    network = pc.is_valid(f["target.details.network_faults.toxiproxy"])
    columns = {
        "run_id": r["run_id"],
        "started_at": pc.cast(r["started_at"], pa.timestamp("us", tz="UTC")),
        "format": r["format"],
        "spec_file": pc.list_element(pc.split_pattern(r["test_id"], "::", max_splits=1), 0),
        "test_id": r["test_id"],
        "test": r["test"],
        "outcome": r["outcome"],
        "message": r["message"],
        "duration_s": r["duration_s"],
        "driver_name": f["driver.name"],
        "driver_version": f["driver.version"],
        # records written before driver.iteration_mode (the synthetic ones among them) have no mode
        "iteration_mode": f.get("driver.iteration_mode", pa.chunked_array([pa.nulls(raw.num_rows, _S)])),
        "target_name": f["target.name"],
        "target_kind": f["target.kind"],
        "topology": f["target.topology"],
        "server_version": f["target.version"],
        "target_version": pc.coalesce(f["target.details.package_version"], f["target.version"]),
        "failpoints": r["failpoints"],
        "network_faults": network,
        "matrix": f["labels.matrix"],
        "cell_label": f["labels.cell"],
        "repeat": pc.cast(f["labels.repeat"], pa.int32()),
        "expected": f["expectation.expected"],
        "expectation_kind": f["expectation.kind"],
        "causes": _causes_text(r["causes"]),
        "expectation_reason": f["expectation.reason"],
        "not_reached": pc.list_value_length(r["not_reached"]).cast(_L),
        "faults_injected": pc.if_else(is_campaign, pc.list_value_length(f["details.faults"]), None),
        "anomalies": pc.if_else(is_campaign, pc.list_value_length(f["details.anomalies"]), None),
        "source": pa.repeat("jsonl", raw.num_rows),
        "rules": pc.fill_null(r["rules"], pa.scalar([], pa.list_(_S))),
    }
    for name in ("resumes", "disallowed_errors", "events"):
        columns[name] = pc.if_else(is_campaign, f[f"details.{name}"], None)
    unknown = "unknown"
    configured = pc.and_(network, pc.invert(is_campaign))
    columns["cell"] = pc.binary_join_element_wise(
        *[pc.coalesce(columns[name], unknown) for name in ("driver_name", "driver_version")],
        _bracketed(columns["iteration_mode"]),
        pa.repeat("/", raw.num_rows),
        *[pc.coalesce(columns[name], unknown) for name in ("target_name", "target_version", "topology")],
        columns["failpoints"],
        pc.if_else(configured, "+netfaults", None),
        " ",
        null_handling="skip",
    )
    columns.update(_failure_columns(columns["outcome"], columns["message"]))
    return pa.table({name: columns[name] for name in schema.names}).cast(schema)


def _bracketed(mode: pa.ChunkedArray) -> pa.ChunkedArray:
    """``reports.normalise.cell_name``'s mode part: ``[emitter]``, null (left out of the name) with no mode."""
    present = pc.if_else(pc.equal(mode, ""), None, mode)
    return pc.binary_join_element_wise("[", present, "]", "", null_handling="emit_null")


def _causes_text(causes: pa.ChunkedArray) -> pa.Array:
    """``reports.normalise.causes_text``: the causes as the JSON text Spark's ``to_json`` writes (the cause's fields
    in the schema's order, null fields left out, no spaces), null when there are none; only failures have any."""
    texts = [
        json.dumps(
            [{k: v for k, v in cause.items() if v is not None} for cause in row],
            separators=(",", ":"),
            ensure_ascii=False,
        )
        if row
        else None
        for row in causes.to_pylist()
    ]
    return pa.array(texts, _S)


def _failure_columns(outcome: pa.ChunkedArray, message: pa.ChunkedArray) -> dict[str, pa.Array]:
    """``error_code``, ``error_code_name`` and ``message_pattern`` of the failing verdicts (null elsewhere)."""
    failing = pc.is_in(outcome, pa.array(list(FAILING))).to_numpy(zero_copy_only=False)
    where = np.flatnonzero(failing)
    texts = message.take(pa.array(where)).to_pylist()
    codes, names, patterns = [None] * len(failing), [None] * len(failing), [None] * len(failing)
    for index, text in zip(where, texts, strict=True):
        match = _ERROR_CODE.search(text or "")
        if match:
            codes[index], names[index] = int(match[1]), match[2]
        patterns[index] = message_pattern(text)
    return {
        "error_code": pa.array(codes, pa.int32()),
        "error_code_name": pa.array(names, _S),
        "message_pattern": pa.array(patterns, _S),
    }


def _write_part(args: tuple[int, int, int, int, int, str]) -> tuple[str, int, int]:
    """Nights ``[first, last)`` (at most ``rows`` rows in all) as one Parquet file; (file, rows, bytes)."""
    seed, rows, first, last, part, out = args
    writer, schema = NightWriter(seed), verdict_arrow_schema()
    per_night = writer.rows_per_night
    buffer = BytesIO()
    for night in range(first, last):
        for chunk in writer.night(night, min(per_night, rows - night * per_night)):
            buffer.write(chunk.encode())
    table = verdicts_from_json(buffer.getbuffer(), schema)
    buffer.close()
    return _write(table, Path(out) / PART.format(part))


def _write(table: pa.Table, path: Path) -> tuple[str, int, int]:
    partial = path.with_suffix(".partial")
    pq.write_table(table, partial, compression="snappy")
    partial.rename(path)  # a killed writer leaves no truncated part behind
    return str(path), table.num_rows, path.stat().st_size


def _copy_part(args: tuple[str, int, int, int, int, str]) -> tuple[str, int, int]:
    """Part ``source`` moved ``copy`` x ``span_s`` seconds later, as part ``part``, cut to ``rows`` rows."""
    source, copy, span_s, rows, part, out = args
    table = pq.read_table(source)
    table = table.slice(0, rows)
    suffix = f"~c{copy}"
    moved = {
        "run_id": pc.binary_join_element_wise(table["run_id"], suffix, ""),
        "matrix": pc.binary_join_element_wise(table["matrix"], suffix, ""),
        "started_at": pc.add(table["started_at"], pa.scalar(span_s * copy * 1_000_000, pa.duration("us"))),
    }
    for name, column in moved.items():
        table = table.set_column(table.schema.get_field_index(name), name, column.cast(table.schema.field(name).type))
    return _write(table, Path(out) / PART.format(part))


@dataclass
class HistoryManifest:
    rows: int
    seed: int
    nights: int
    parts: int
    bytes: int
    seconds: float
    workers: int
    distinct_rows: int = 0
    #: Nights each copy of the distinct rows is moved by (0: no copies).
    copy_span_nights: int = 0


def generate_history(
    rows: int, seed: int, out: Path, *, workers: int | None = None, distinct_rows: int | None = None
) -> HistoryManifest:
    """``rows`` verdicts as ``out/verdicts/part-*.parquet`` (a history ``--append-to out`` reads); old parts replaced.

    The first ``distinct_rows`` (default: all) are generated; the rest are re-dated copies of them.
    """
    target = out / "verdicts"
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("part-*"):
        old.unlink()
    per_night = rows_per_night()
    whole_parts = per_night * NIGHTS_PER_PART  # the distinct rows are whole parts, so that copies are too
    distinct = min(rows, -(-(distinct_rows or rows) // whole_parts) * whole_parts)
    nights = -(-distinct // per_night)
    starts = list(range(0, nights, NIGHTS_PER_PART))
    jobs = [
        (seed, distinct, first, min(first + NIGHTS_PER_PART, nights), part, str(target))
        for part, first in enumerate(starts)
    ]
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    started = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        written = list(pool.map(_write_part, jobs))
        copies, left, part = [], rows - distinct, len(written)
        copy = 1
        while left > 0:
            for source, count, _ in written[: len(jobs)]:
                if left <= 0:
                    break
                copies.append((source, copy, nights * 86_400, min(count, left), part, str(target)))
                left -= min(count, left)
                part += 1
            copy += 1
        written += list(pool.map(_copy_part, copies))
    seconds = time.perf_counter() - started
    total = sum(count for _, count, _ in written)
    if total != rows:
        raise RuntimeError(f"wrote {total} verdicts, expected {rows}")
    (target / VERDICTS_MARKER).write_text("normalised verdicts written by benchmarks/synthetic_history.py\n")
    manifest = HistoryManifest(
        rows=rows,
        seed=seed,
        nights=nights,
        parts=len(written),
        bytes=sum(size for _, _, size in written),
        seconds=round(seconds, 2),
        workers=workers,
        distinct_rows=distinct,
        copy_span_nights=nights if distinct < rows else 0,
    )
    (out / MANIFEST).write_text(json.dumps(asdict(manifest), indent=1) + "\n")
    return manifest


def existing_history(out: Path, rows: int, seed: int) -> HistoryManifest | None:
    """The manifest of a history already written in ``out`` with these rows and seed, if any."""
    try:
        manifest = HistoryManifest(**json.loads((out / MANIFEST).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    parts = list((out / "verdicts").glob("part-*.parquet"))
    if manifest.rows != rows or manifest.seed != seed or len(parts) != manifest.parts:
        return None
    return manifest


def first_free_night(manifest: HistoryManifest) -> int:
    """The first night after the history (a night of JSON lines generated from it adds new runs)."""
    copies = -(-manifest.rows // manifest.distinct_rows) if manifest.distinct_rows else 1
    return max(manifest.nights, manifest.copy_span_nights * copies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True, help="verdicts to write")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True, help="the history directory (verdicts go to OUT/verdicts)")
    parser.add_argument("--workers", type=int, default=None, help="processes writing parts (default: CPUs)")
    parser.add_argument(
        "--distinct-rows",
        type=int,
        default=None,
        help="generate this many; the rest are re-dated copies (default: all)",
    )
    args = parser.parse_args(argv)
    made = generate_history(args.rows, args.seed, args.out, workers=args.workers, distinct_rows=args.distinct_rows)
    print(
        f"{made.rows:,} verdicts ({made.nights} nights) in {made.parts} Parquet part(s), {made.bytes / 2**30:.2f} GiB, "
        f"{made.seconds:.1f} s ({made.rows / made.seconds:,.0f} rows/s, {made.workers} worker(s)) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
