"""A fault campaign's schedule: faults as values, derived from a seed and nothing else.

A :class:`Fault` says *what* (``kind`` and ``params``) and *when* (``at_event``:
the number of change events the consumer has received when it is applied).
:func:`make_schedule` is pure: it reads only its arguments and a private
``random.Random(seed)``, so the same seed gives the same list on every
machine and run, and a result record's ``seed`` replays its faults.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.core.constants import CURSOR_NOT_FOUND, RESUMABLE_CODES

# RESUMABLE_CODES: the spec's legacy resumable codes (wire version < 9). On 4.4+ wire versions only the
# ``ResumableChangeStreamError`` label makes an error resumable, so the same codes without the label must
# reach the application.
#: SDAM "not primary" / "node is recovering" codes: a driver marks the server Unknown on them and,
#: with pymongo 4.20 and SecantusDB, selects it again only after heartbeatFrequencyMS (10 s), so a
#: resume fails on server selection; and pymongo turns them into a ConnectionFailure and resumes even
#: without the label. Both are SDAM behaviour, not change-stream resumability: left out of the draws.
STATE_CHANGE_CODES = (91, 189, 10107, 11600, 11602, 13435, 13436)
#: StaleConfig cannot be injected bare: the server answers 40671 "Missing required extra info".
NOT_INJECTABLE_CODES = (13388,)
DRAWN_CODES = tuple(c for c in RESUMABLE_CODES if c not in STATE_CHANGE_CODES + NOT_INJECTABLE_CODES)
#: ``ChangeStreamFatalError``: never resumable; servers label it ``NonResumableChangeStreamError``.
NON_RESUMABLE_CODE = 280

#: Fault kinds -> what the nemesis does (docs/campaigns.md has the table).
FAILPOINT_KINDS = ("resumable_error", "cursor_not_found", "close_connection", "unlabelled_error", "non_resumable_error")
NETWORK_KINDS = ("reset_peer", "timeout", "latency", "limit_data", "proxy_down")
TARGET_KINDS = ("restart",)
KINDS = FAILPOINT_KINDS + NETWORK_KINDS + TARGET_KINDS
#: Kinds whose error the driver must hand to the application instead of resuming.
SURFACING_KINDS = ("unlabelled_error", "non_resumable_error")
#: Kinds during which the target is unreachable from the consumer (server selection may fail).
OUTAGE_KINDS = ("reset_peer", "timeout", "limit_data", "proxy_down", "restart")


@dataclass(frozen=True)
class Fault:
    """One fault: applied when the consumer has received ``at_event`` events, removed after its window."""

    index: int
    kind: str
    at_event: int
    params: tuple[tuple[str, Any], ...] = field(default=())

    def param(self, name: str, default: Any = None) -> Any:
        return dict(self.params).get(name, default)

    def as_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["params"] = dict(self.params)
        return record

    def describe(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.params)
        return f"#{self.index} {self.kind}@{self.at_event}" + (f" ({shown})" if shown else "")


def _params(kind: str, rng: random.Random) -> dict[str, Any]:
    """Parameters for one kind. Windows are short: a campaign of 50 faults should take a minute, not ten."""
    if kind == "resumable_error":
        return {"code": rng.choice(DRAWN_CODES), "window_ms": rng.randint(150, 400)}
    if kind == "cursor_not_found":
        return {"code": CURSOR_NOT_FOUND, "window_ms": rng.randint(150, 400)}
    if kind == "close_connection":
        return {"window_ms": rng.randint(150, 400)}
    if kind == "unlabelled_error":
        return {"code": rng.choice(DRAWN_CODES), "window_ms": rng.randint(150, 400)}
    if kind == "non_resumable_error":
        return {"code": NON_RESUMABLE_CODE, "window_ms": rng.randint(150, 400)}
    if kind == "reset_peer":
        return {"stream": rng.choice(("upstream", "downstream")), "window_ms": rng.randint(100, 500)}
    if kind == "timeout":
        return {"timeout_ms": rng.randint(100, 500), "window_ms": rng.randint(200, 600)}
    if kind == "latency":
        return {"latency_ms": rng.randint(50, 300), "jitter_ms": rng.randint(0, 50), "window_ms": rng.randint(300, 900)}
    if kind == "limit_data":
        return {"bytes": rng.randint(200, 4000), "window_ms": rng.randint(100, 500)}
    if kind == "proxy_down":
        return {"window_ms": rng.randint(100, 800)}
    if kind == "restart":
        return {"down_ms": rng.randint(0, 500)}
    raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(KINDS)}")


def make_schedule(seed: int, n_events: int, n_faults: int, kinds: tuple[str, ...] | list[str] = KINDS) -> list[Fault]:
    """``n_faults`` faults spread over the first 90% of ``n_events`` events, in ``at_event`` order.

    The range is cut into ``n_faults`` equal slots and each fault falls at a
    random point of its own slot: faults never pile up on one event, yet
    where each lands within its slot is the seed's choice. Kinds are drawn
    uniformly from ``kinds`` (deduplicated, in the order given).
    """
    kinds = tuple(dict.fromkeys(kinds))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown fault kind(s) {unknown}; known: {', '.join(KINDS)}")
    if n_faults < 0 or n_events < 0:
        raise ValueError("n_events and n_faults must be non-negative")
    if n_faults and not kinds:
        raise ValueError("faults were asked for but no kinds are allowed")
    rng = random.Random(seed)
    lo, hi = min(n_events, max(1, n_events // 20)), max(1, (n_events * 9) // 10)
    span = max(hi - lo, 1)
    faults = []
    for index in range(n_faults):
        start = lo + (span * index) // n_faults
        end = max(start, lo + (span * (index + 1)) // n_faults - 1)
        kind = rng.choice(kinds)
        at_event = rng.randint(start, end)
        faults.append(
            Fault(index=index, kind=kind, at_event=at_event, params=tuple(sorted(_params(kind, rng).items())))
        )
    return faults
