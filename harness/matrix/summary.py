"""What a matrix prints: a line per event as it happens, and at the end one row per cell.

Everything here reads the manifest, so a resumed matrix's table covers the
repeats finished by earlier invocations too. A cell is ``done`` when all its
repeats ran; ``failed`` when it could not be built or a repeat could not run;
its ``versions`` column is ``MISMATCH`` or ``unverified`` when the records do
not show the requested versions (the cell's results then do not certify what
its label says, and the matrix exits 1).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.core.verdicts import OUTCOMES
from harness.matrix.manifest import DONE, FAILED, INCOMPATIBLE, INTERRUPTED, PENDING, RUNNING
from harness.matrix.observe import MISMATCH, OK, RECORDED, UNVERIFIED


def counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(outcome, 0)} {outcome}" for outcome in OUTCOMES)


def cell_status(cell: dict[str, Any]) -> str:
    statuses = {repeat["status"] for repeat in cell["repeats"]}
    if statuses and statuses <= {INCOMPATIBLE}:
        return INCOMPATIBLE
    if cell.get("failure") or FAILED in statuses:
        return FAILED
    if statuses <= {DONE}:
        return DONE
    if statuses & {RUNNING, INTERRUPTED}:
        return INTERRUPTED
    return PENDING


def version_status(cell: dict[str, Any]) -> str:
    verdicts = {item["verdict"] for repeat in cell["repeats"] for item in (repeat.get("versions") or {}).values()}
    for verdict in (MISMATCH, UNVERIFIED, OK, RECORDED):
        if verdict in verdicts:
            return verdict
    return "-"


def cell_totals(cell: dict[str, Any]) -> Counter:
    totals: Counter = Counter()
    for repeat in cell["repeats"]:
        totals.update(repeat.get("counts") or {})
    return totals


def cell_seconds(cell: dict[str, Any]) -> float:
    env = cell["env"]
    build = env.get("build_s", 0.0) if not env.get("cached") else 0.0
    return build + sum(repeat.get("seconds") or 0.0 for repeat in cell["repeats"])


def _failure_text(cell: dict[str, Any]) -> str:
    failure = cell.get("failure") or next((r["failure"] for r in cell["repeats"] if r.get("failure")), None)
    if not failure:
        return ""
    return f"{failure['stage']}: {last_line(failure['reason'])}"[:160]


def last_line(text: str) -> str:
    """The line of a stderr tail that says most: its last non-blank one (a traceback's exception, uv's verdict)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else text[:200]


def summary_lines(data: dict[str, Any]) -> list[str]:
    header = ["cell", "status", *OUTCOMES, "runs", "versions", "seconds"]
    rows = []
    for cell in data["cells"]:
        totals = cell_totals(cell)
        ran = sum(1 for repeat in cell["repeats"] if repeat["status"] == DONE)
        rows.append(
            [
                cell["id"],
                cell_status(cell),
                *(str(totals.get(o, 0)) for o in OUTCOMES),
                f"{ran}/{len(cell['repeats'])}",
                version_status(cell),
                f"{cell_seconds(cell):.1f}",
                _failure_text(cell),
            ]
        )
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(h.ljust(w) if i < 2 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths, strict=True)))
    ]
    for row in rows:
        # A row is one longer than the header: its last field, the failure text, goes after the columns, unpadded.
        cells = [v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=False))]
        lines.append("  ".join(cells) + (f"  {row[-1]}" if row[-1] else ""))
    return lines


def exit_status(data: dict[str, Any]) -> int:
    """0 when every cell ran every repeat with the versions it asked for (or its pair cannot work), else 1."""
    ran = [cell for cell in data["cells"] if cell_status(cell) != INCOMPATIBLE]
    complete = all(cell_status(cell) == DONE for cell in ran)
    verified = all(version_status(cell) in (OK, RECORDED) for cell in ran)
    return 0 if complete and verified else 1
