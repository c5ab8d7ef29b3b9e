"""Exactly-once, in-order delivery, judged from the sequence numbers the consumer received.

The writer inserts ``seq`` 0..n-1, each acknowledged before the next batch,
so the server's change events must carry them in that order. Given what the
consumer received, in delivery order, :func:`check_delivery` reports every
way that can go wrong, with the positions involved:

* ``gap``: a sequence number never delivered;
* ``duplicate``: delivered again after its first delivery (a resume that restarted too early);
* ``reorder``: first delivered after a larger one (a resume that skipped ahead and came back,
  or a server that emitted out of order);
* ``unexpected``: a number the writer never wrote, or an event that is not one of its inserts.

Pure: no I/O, no clock; the tests feed it hand-made and generated sequences.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Anomaly:
    kind: str  # gap | duplicate | reorder | unexpected
    seq: int | None
    #: Delivery positions involved (empty for a gap: it was never delivered).
    positions: tuple[int, ...] = ()
    detail: str = ""

    def as_record(self) -> dict:
        record = asdict(self)
        record["positions"] = list(self.positions)
        return record


def check_delivery(received: Sequence[int | None], expected_count: int) -> list[Anomaly]:
    """Anomalies in ``received`` (``None`` marks an event without a ``seq``) for seqs ``0..expected_count-1``."""
    anomalies: list[Anomaly] = []
    first_position: dict[int, int] = {}
    highest = -1
    for position, seq in enumerate(received):
        if seq is None or isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < expected_count:
            anomalies.append(
                Anomaly(
                    "unexpected",
                    seq if isinstance(seq, int) else None,
                    (position,),
                    f"delivered {seq!r}; the writer wrote seq 0..{expected_count - 1}",
                )
            )
            continue
        if seq in first_position:
            anomalies.append(
                Anomaly(
                    "duplicate",
                    seq,
                    (first_position[seq], position),
                    f"seq {seq} delivered at positions {first_position[seq]} and {position}",
                )
            )
            continue
        first_position[seq] = position
        if seq < highest:
            anomalies.append(
                Anomaly("reorder", seq, (position,), f"seq {seq} delivered at position {position}, after seq {highest}")
            )
        highest = max(highest, seq)
    for seq in range(expected_count):
        if seq not in first_position:
            anomalies.append(Anomaly("gap", seq, (), f"seq {seq} was never delivered"))
    return anomalies


def _ranges(values: Iterable[int]) -> list[str]:
    """``[1, 2, 3, 7]`` -> ``["1-3", "7"]``."""
    out: list[str] = []
    run: list[int] = []
    for value in sorted(values):
        if run and value == run[-1] + 1:
            run.append(value)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [value]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return out


def summarise(anomalies: Sequence[Anomaly], limit: int = 8) -> str:
    """One line for a 2 a.m. reader: counts per kind and the first few seqs of each."""
    if not anomalies:
        return "no anomaly: every seq delivered exactly once, in order"
    parts = []
    for kind in ("gap", "duplicate", "reorder", "unexpected"):
        seqs = [a.seq for a in anomalies if a.kind == kind]
        if not seqs:
            continue
        shown = _ranges(s for s in seqs if s is not None)
        more = f", ... ({len(shown) - limit} more ranges)" if len(shown) > limit else ""
        noun = kind if len(seqs) == 1 or kind == "unexpected" else kind + "s"
        parts.append(f"{len(seqs)} {noun} (seq {', '.join(shown[:limit])}{more})")
    return "; ".join(parts)
