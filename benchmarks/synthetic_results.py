"""Write N synthetic ``cs-harness.result/1`` records: a year of nightly matrices, fast and memory-flat.

    python benchmarks/synthetic_results.py --rows 1000000 --seed 7 --out /tmp/synth-1m
    python benchmarks/synthetic_results.py --rows 10000000 --seed 7 --out /tmp/synth-10m --workers 2

What the records say is described in :mod:`synthetic_world` (the real test
ids and requirements, the version matrix, the planted regressions, fixes and
flakes). This module only turns it into JSON lines, at the speed a 10M-row
benchmark needs:

* The records are byte-for-byte what ``harness.core.records.make_record`` would
  give, serialised as the results store does, but not built field by field:
  for each test the fixed head of its record, and for each run the fixed
  provenance tail, are cut once out of a real ``make_record`` output; a row is
  those two strings around its own outcome, message, time and duration.
* Memory is flat: one run (155 lines) is built at a time and written.
* The data are cut into *nights* (one matrix: every cell x 3 repeats, plus a
  campaign per cell), each drawn from its own ``Random(seed, night)``. Part
  files hold contiguous nights and are written by ``--workers`` processes,
  so the content depends on ``--rows`` and ``--seed`` only, not on how
  many parts or workers wrote it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from random import Random

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic_campaign import campaign_record
from benchmarks.synthetic_world import (
    CAMPAIGNS_PER_CELL,
    CELLS,
    REPEATS,
    Behaviour,
    CatalogTest,
    Cell,
    check_behaviours,
    load_catalog,
    plan_for,
)
from harness.core.causes import of_verdict
from harness.core.expectations import Expectations, KnownCause, Signature
from harness.core.records import RunProvenance, make_record, record_line

#: Midnight UTC of the first night (2025-11-24); night n is this plus n days.
FIRST_NIGHT = 1_763_942_400
MANIFEST = "_synthetic.json"
PART = "part-{:05d}.jsonl"
_MARK = "\x00MARK\x00"


@dataclass
class Manifest:
    rows: int
    seed: int
    parts: int
    nights: int
    rows_per_night: int
    bytes: int
    seconds: float
    workers: int
    files: list[str]
    first_night: int = 0


def _cut(record: dict, start_key: str, end_key: str | None) -> str:
    """The serialised text of ``record`` (as the results store writes it) from ``start_key`` up to ``end_key``."""
    text = record_line(record)
    start = 0 if start_key == "" else text.index(f'"{start_key}": ')
    end = len(text) if end_key is None else text.index(f'"{end_key}": ')
    return text[start:end]


def _template(provenance: RunProvenance, test: CatalogTest) -> dict:
    return make_record(
        provenance,
        format=test.format,
        file=test.file,
        test=test.test,
        test_id=test.test_id,
        line=test.line,
        outcome=_MARK,
        message=_MARK,
        started_at=_MARK,
        duration_s=0.0,
        expectation={"expected": True, "kind": "pass", "reason": ""},
    )


class _Clock:
    """``datetime.isoformat(timespec='milliseconds')`` of UTC epoch seconds, formatting each second once."""

    def __init__(self) -> None:
        self._second = -1
        self._prefix = ""

    def iso(self, t: float) -> str:
        second = int(t)
        if second != self._second:
            self._second = second
            self._prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self._prefix}.{int((t - second) * 1000):03d}+00:00"


def _known(test_id: str, outcome: str, reason: str) -> KnownCause:
    """A synthetic known deviation: one entry explaining the one cause a message-only verdict has, in one test."""
    clause = "set-up" if outcome == "error" else "check"
    kind = "harness-limitation" if outcome == "error" else "server-bug"
    return KnownCause(test_id, "CS-X", kind, Signature(clause=clause), reason, "synthetic", outcome, (test_id,))


class NightWriter:
    """Renders nights of the matrix as lines; one instance per process, its templates built once."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.tests = load_catalog()
        check_behaviours(self.tests)
        self.plans = [[plan_for(test, cell) for test in self.tests] for cell in CELLS]
        dummy = RunProvenance(run_id="x", target={}, driver={})
        self.heads = [_cut(_template(dummy, t), "", "outcome") for t in self.tests]
        self.known = [
            Expectations(
                [
                    _known(t.test_id, b.outcome, b.known_reason)
                    for t, plan in zip(self.tests, plans, strict=True)
                    for b in plan.failures
                    if b.known_reason
                ]
            )
            for plans in self.plans
        ]
        self._expectation: dict[tuple[int, str, str], str] = {}
        self.clock = _Clock()
        self.rows_per_night = len(CELLS) * (REPEATS * len(self.tests) + CAMPAIGNS_PER_CELL)

    def expectation(self, cell_index: int, test_id: str, outcome: str) -> str:
        key = (cell_index, test_id, outcome)
        text = self._expectation.get(key)
        if text is None:
            causes = of_verdict(outcome, "synthetic", [], [])  # a message-only verdict's one cause
            text = json.dumps(self.known[cell_index].classify(test_id, outcome, causes).as_record())
            self._expectation[key] = text
        return text

    def night(self, night: int, limit: int) -> Iterator[str]:
        """The night's runs as chunks of text (one run each), stopping after ``limit`` lines."""
        rng = Random(self.seed * 1_000_003 + night)
        t = FIRST_NIGHT + night * 86_400 + 3600 + rng.uniform(0, 600)
        matrix_id = f"m-{rng.getrandbits(48):012x}"  # each night's matrix (its spec checkout) differs
        left = limit
        for cell_index, cell in enumerate(CELLS):
            for repeat in range(1, REPEATS + 1):
                if left <= 0:
                    return
                provenance = self._provenance(rng, cell, t, matrix_id, repeat)
                lines, t = self._run(rng, cell_index, provenance, t, min(left, len(self.tests)))
                left -= len(lines)
                yield "".join(lines)
                if repeat == 1:
                    for _ in range(CAMPAIGNS_PER_CELL):
                        if left <= 0:
                            return
                        campaign = self._campaign(rng, cell, t, matrix_id)
                        t += campaign["duration_s"] + 2
                        left -= 1
                        yield record_line(campaign) + "\n"

    def _provenance(
        self, rng: Random, cell: Cell, t: float, matrix_id: str, repeat: int, campaign: bool = False
    ) -> RunProvenance:
        run_id = time.strftime("%Y%m%dT%H%M%SZ-", time.gmtime(t)) + f"{rng.getrandbits(32):08x}"
        target = cell.target
        port = 27017 if target.kind == "uri" else rng.randrange(32768, 61000)
        labels = cell.labels(matrix_id, repeat)
        extra = (
            {"labels": labels}
            if campaign
            else {
                "expectations_file": "specs/expectations/secantusdb.yml" if target.package_version else "<none>",
                "labels": labels,
            }
        )
        return RunProvenance(
            run_id=run_id,
            target=target.info(port).as_record(),
            driver={"name": "pymongo", "version": cell.driver_version},
            failpoints=target.failpoints,
            extra=extra,
        )

    def _campaign(self, rng: Random, cell: Cell, t: float, matrix_id: str) -> dict:
        provenance = self._provenance(rng, cell, t, matrix_id, 1, campaign=True)
        return campaign_record(
            provenance,
            rng,
            started_at=self.clock.iso(t),
            network=cell.target.network_faults,
            anomaly_rate=0.2 if cell.target.failpoints == "emulated" else 0.02,
        )

    def _run(
        self, rng: Random, cell_index: int, provenance: RunProvenance, t: float, count: int
    ) -> tuple[list[str], float]:
        """One harness run of the cell: ``count`` tests in catalog order, each line complete."""
        template = _template(provenance, self.tests[0])
        keys = list(template)
        tail = _cut(template, keys[keys.index("expectation") + 1], None)  # the run's part, after the verdict's
        plans, heads, iso, random = self.plans[cell_index], self.heads, self.clock.iso, rng.random
        lines = []
        t += 1.5 + random()  # start-up: target, expectations, first connection
        for index in range(count):
            test, plan = self.tests[index], plans[index]
            behaviour: Behaviour | None = None
            if plan.skip is not None:
                outcome, message, mismatches, causes = "skipped", json.dumps(plan.skip), "[]", "[]"
                duration = 5e-05 + 1e-04 * random()
            else:
                for candidate in plan.failures:
                    if candidate.probability >= 1.0 or random() < candidate.probability:
                        behaviour = candidate
                        break
                if behaviour is None:
                    outcome, message, mismatches, causes = "passed", '""', "[]", "[]"
                    duration = test.duration_s * (0.6 + 0.8 * random())
                else:
                    outcome = behaviour.outcome
                    text = behaviour.message(rng)
                    message, mismatches = json.dumps(text), json.dumps(list(behaviour.mismatches))
                    # the one cause a message-only verdict has (harness.core.causes.of_verdict)
                    causes = json.dumps([c.as_record() for c in of_verdict(outcome, text, [], [])])
                    duration = (
                        (10.0 + 0.05 * random())
                        if text.startswith("timed out after 10s")
                        else test.duration_s * (1.0 + random())
                    )
            lines.append(
                f'{heads[index]}"outcome": "{outcome}", "attempt": 1, "message": {message}, '
                f'"mismatches": {mismatches}, "causes": {causes}, "not_reached": [], '
                f'"started_at": "{iso(t)}", "duration_s": {round(duration, 6)!r}, '
                f'"expectation": {self.expectation(cell_index, test.test_id, outcome)}, {tail}\n'
            )
            t += duration + 0.002 + 0.01 * random()
        return lines, t


def _write_part(args: tuple[int, int, int, int, int, str, int]) -> tuple[str, int, int]:
    """Nights ``[first, last)`` of ``rows`` (counted from night ``origin``) as one part file; (file, lines, bytes)."""
    seed, rows, first, last, part, out, origin = args
    writer = NightWriter(seed)
    per_night = writer.rows_per_night
    path = Path(out) / PART.format(part)
    lines = 0
    with open(path, "w", encoding="utf-8", buffering=8 << 20) as handle:
        for night in range(first, last):
            limit = min(per_night, rows - (night - origin) * per_night)
            for chunk in writer.night(night, limit):
                handle.write(chunk)
                lines += chunk.count("\n")
        size = handle.tell()
    return str(path), lines, size


def rows_per_night() -> int:
    return len(CELLS) * (REPEATS * len(load_catalog()) + CAMPAIGNS_PER_CELL)


def generate(
    rows: int,
    seed: int,
    out: Path,
    *,
    parts: int | None = None,
    workers: int | None = None,
    first_night: int = 0,
) -> Manifest:
    """Write ``rows`` records as part files under ``out`` (its old part files are replaced).

    ``first_night`` starts the data that many nights later: the night after a history
    (``synthetic_history.py``) made with the same seed, with runs the history does not hold.
    """
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("part-*.jsonl"):
        old.unlink()
    (out / MANIFEST).unlink(missing_ok=True)
    per_night = rows_per_night()
    nights = -(-rows // per_night)
    workers = max(1, workers or os.cpu_count() or 1)
    parts = max(1, min(parts or max(workers, -(-rows // 1_000_000)), nights))
    workers = min(workers, parts)
    jobs = [
        (
            seed,
            rows,
            first_night + p * nights // parts,
            first_night + (p + 1) * nights // parts,
            p,
            str(out),
            first_night,
        )
        for p in range(parts)
    ]
    started = time.perf_counter()
    if workers == 1:
        written = [_write_part(job) for job in jobs]
    else:
        with ProcessPoolExecutor(workers) as pool:
            written = list(pool.map(_write_part, jobs))
    seconds = time.perf_counter() - started
    total = sum(lines for _, lines, _ in written)
    if total != rows:
        raise RuntimeError(f"wrote {total} lines, expected {rows}")
    manifest = Manifest(
        rows=rows,
        seed=seed,
        parts=parts,
        nights=nights,
        rows_per_night=per_night,
        bytes=sum(size for _, _, size in written),
        seconds=round(seconds, 2),
        workers=workers,
        files=[Path(path).name for path, _, _ in written],
        first_night=first_night,
    )
    (out / MANIFEST).write_text(json.dumps(asdict(manifest), indent=1) + "\n")
    return manifest


def existing(out: Path, rows: int, seed: int, first_night: int = 0) -> Manifest | None:
    """The manifest of data already generated in ``out`` with these rows and seed (all parts present), if any."""
    try:
        manifest = Manifest(**json.loads((out / MANIFEST).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if (
        manifest.rows != rows
        or manifest.seed != seed
        or manifest.first_night != first_night
        or not all((out / f).is_file() for f in manifest.files)
    ):
        return None
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, required=True, help="records to write")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, required=True, help="directory for part-NNNNN.jsonl files")
    parser.add_argument(
        "--parts", type=int, default=None, help="part files (default: one per million rows, at least one per worker)"
    )
    parser.add_argument("--workers", type=int, default=None, help="processes writing parts (default: CPUs)")
    parser.add_argument(
        "--first-night", type=int, default=0, help="start this many nights in (after a history of that many nights)"
    )
    args = parser.parse_args(argv)
    manifest = generate(
        args.rows, args.seed, args.out, parts=args.parts, workers=args.workers, first_night=args.first_night
    )
    print(
        f"{manifest.rows:,} rows in {manifest.parts} part(s), {manifest.bytes / 2**30:.2f} GiB, "
        f"{manifest.seconds:.1f} s ({manifest.rows / manifest.seconds:,.0f} rows/s, {manifest.workers} worker(s)) "
        f"-> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
